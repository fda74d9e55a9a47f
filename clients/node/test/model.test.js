'use strict';
/** The model: tokens, enum names, events, Match, View, MatchResult, Random. */

const assert = require('node:assert/strict');
const { test } = require('node:test');

const {
  TOKENS, CARD_VALUES, REFUSAL_CODES, ERROR_CODES, VERDICT_KINDS, tokenOf, eventFromProto,
  Match, MatchResult, View,
} = require('../lib/model');
const { loadProtocol, enumNames, resolveProtoDir, DEFAULT_PROTO_DIR } = require('../lib/proto');
const { Random } = require('../lib/random');

const protocol = loadProtocol();

test('card tokens follow the Card enum of game.proto', () => {
  const names = enumNames(protocol, 'Card');
  const expected = {
    CARD_MINUS_TEN: '-10', CARD_REVERSE: 'R', CARD_PLAY_TWO: 'P2', CARD_DOUBLE_PLAY: 'DP', CARD_HOLD: 'H', CARD_99: '99',
  };
  for (let v = 0; v < 11; v++) expected[`CARD_${v}`] = String(v);
  assert.equal(names.length, TOKENS.length);
  for (let i = 1; i < names.length; i++) {
    assert.equal(TOKENS[i], expected[names[i]], names[i]);
    assert.equal(CARD_VALUES[TOKENS[i]], i);
  }
  assert.equal(tokenOf(0), '?');
  assert.equal(tokenOf(99), '?');
});

test('the names of the other enums match referee.proto', () => {
  for (const [enumName, ours, prefix] of [
    ['RefusalCode', REFUSAL_CODES, 'REFUSAL_CODE_'],
    ['ErrorCode', ERROR_CODES, 'ERROR_CODE_'],
    ['VerdictKind', VERDICT_KINDS, 'VERDICT_KIND_'],
  ]) {
    const names = enumNames(protocol, enumName).map((n) => n.slice(prefix.length).toLowerCase());
    assert.deepEqual(ours, names, enumName);
  }
});

test('the proto folder is the repository\'s, unless given or set in the environment', () => {
  assert.ok(DEFAULT_PROTO_DIR.endsWith('/proto'));
  assert.equal(resolveProtoDir(undefined, {}), DEFAULT_PROTO_DIR);
  assert.equal(resolveProtoDir(undefined, { ONO99_PROTO_DIR: '/x/proto' }), '/x/proto');
  assert.equal(resolveProtoDir('/y', { ONO99_PROTO_DIR: '/x/proto' }), '/y');
  assert.throws(() => loadProtocol('/nowhere'), /no protocol at \/nowhere\/ono99\/v1\/referee\.proto.*ONO99_PROTO_DIR/);
});

/** An Event as the client decodes it off the wire. */
function wireEvent(event) {
  const { play } = protocol;
  const msg = play.responseDeserialize(play.responseSerialize({ events: { matchId: 'm', events: [event] } }));
  return msg.events.events[0];
}

test('every event kind converts like the Python SDK\'s', () => {
  const cases = [
    [{ roundStarted: { round: 2, dealer: 1, first: 2, total: 0 } }, { kind: 'deal', round: 2, dealer: 1, first: 2, total: 0 }],
    [{ cardPlayed: { seat: 1, card: 3, total: 40 } }, { kind: 'play', seat: 1, card: 'P2', total: 40 }],
    [{ fourNinetyNines: { seat: 0, total: 12 } }, { kind: 'four99', seat: 0, total: 12 }],
    [{ cardsDrawn: { seat: 1, count: 2 } }, { kind: 'draw', seat: 1, count: 2 }],
    [{ reshuffled: { drawSize: 30 } }, { kind: 'reshuffle', drawSize: 30 }],
    [{ seatLost: { seat: 2 } }, { kind: 'lose', seat: 2 }],
    [{ tokenLost: { seat: 2, tokensLeft: 1 } }, { kind: 'token', seat: 2, tokensLeft: 1 }],
    [{ outOfRound: { seat: 1, card: 16 } }, { kind: 'out', seat: 1, card: '10' }],
    [{ outOfRound: { seat: 1 } }, { kind: 'out', seat: 1, card: null }],
    [{ roundScored: { scores: [10, 0, 35] } }, { kind: 'scores', scores: [10, 0, 35] }],
    [{ seatEliminated: { seat: 1, hand: [1, 17] } }, { kind: 'eliminate', seat: 1, hand: ['-10', '99'] }],
    [{ seatEliminated: { seat: 1 } }, { kind: 'eliminate', seat: 1, hand: null }],
    [{ seatForfeited: { seat: 0 } }, { kind: 'forfeit', seat: 0 }],
    [{ seatForfeited: { seat: 2, together: true } }, { kind: 'forfeit', seat: 2, together: true }],
    [{ gameEnded: { ranking: [{ seats: [1] }, { seats: [0, 2] }], termination: 'max_plays' } },
      { kind: 'end', ranking: [[1], [0, 2]], termination: 'max_plays' }],
    [{}, { kind: 'unknown' }],
  ];
  for (const [wire, expected] of cases) assert.deepEqual(eventFromProto(wireEvent(wire)), expected);
});

function matchWith(events) {
  const m = new Match('m', 0, ['a', 'b'], null, 1000, 0, 0n);
  m._raw.push(...events.map(wireEvent));
  return m;
}

test('match.played() lists the discards in order, from the deal with thisRound', () => {
  const m = matchWith([
    { roundStarted: { round: 1 } },
    { cardPlayed: { seat: 0, card: 7, total: 1 } },
    { outOfRound: { seat: 1, card: 16 } },
    { outOfRound: { seat: 0 } },
    { roundStarted: { round: 2 } },
    { fourNinetyNines: { seat: 1, total: 0 } },
    { cardPlayed: { seat: 0, card: 2, total: 0 } },
  ]);
  assert.deepEqual(m.played(), ['1', '10', '99', '99', '99', '99', 'R']);
  assert.deepEqual(m.played({ thisRound: true }), ['99', '99', '99', '99', 'R']);
  assert.equal(m.events.length, 7);
});

function wireTurn(turn) {
  const { play } = protocol;
  return play.responseDeserialize(play.responseSerialize({ turn })).turn;
}

test('a View reads the turn in camelCase, cards as tokens, 64-bit values exact', () => {
  const match = Match.fromProto(protocol.play.responseDeserialize(protocol.play.responseSerialize({
    matchStart: {
      matchId: 'm', seat: 1, seatNames: ['a', 'b', 'c'], botSeed: '18446744073709551615',
      rules: { ruleset: 'classic', options: { scoring: 'tokens' }, seats: 3, limit: 99 },
      timeControl: { moveMs: 500, bankMs: 2000 },
    },
  })).matchStart);
  assert.equal(match.botSeed, 2n ** 64n - 1n);
  assert.deepEqual(match.names, ['a', 'b', 'c']);
  assert.equal(match.rules.options.scoring, 'tokens');
  assert.equal(match.moveMs, 500);
  const view = new View(wireTurn({
    matchId: 'm', turnId: '9223372036854775807', legal: [7, 2], overLimit: true, moveMs: 500, bankMs: 1500,
    previousLatencyUs: '1234',
    view: {
      seat: 1, hand: [2, 7, 17], total: 90, direction: -1, toAct: 1, owed: 2, drawSize: 20, discardSize: 7,
      round: 3, dealer: 0,
      seats: [
        { handSize: 4, inGame: true, inRound: true, tokens: 2 },
        { handSize: 3, inGame: true, inRound: true, tokens: 1, score: 15 },
        { handSize: 0, inGame: false, inRound: false, revealed: [16, 3] },
      ],
    },
  }), match);
  assert.equal(view.turnId, 9223372036854775807n);
  assert.deepEqual(view.legal, ['1', 'R']);
  assert.deepEqual(view.hand, ['R', '1', '99']);
  assert.equal(view.overLimit, true);
  assert.equal(view.previousLatencyUs, 1234);
  assert.equal(view.limit, 99);
  assert.deepEqual([view.total, view.direction, view.toAct, view.owed, view.drawSize, view.discardSize, view.round,
    view.dealer, view.moveMs, view.bankMs], [90, -1, 1, 2, 20, 7, 3, 0, 500, 1500]);
  assert.deepEqual({ ...view.seats[2] }, { handSize: 0, inGame: false, inRound: false, tokens: 0, score: 0, revealed: ['10', 'P2'] });
  assert.equal(view.seats[1].score, 15);
  // counter-clockwise from seat 1: seat 0, then seat 2 is skipped (out), back to 1
  assert.equal(view.nextSeat(), 0);
  assert.equal(view.nextSeat(0), 1);
  assert.match(String(view), /View\(seat=1, hand=\[R,1,99\], legal=\[1,R\], total=90, owed=2\)/);
});

test('MatchResult: ranking, verdict names, hands, placeOf', () => {
  const { play } = protocol;
  const end = play.responseDeserialize(play.responseSerialize({
    matchEnd: {
      matchId: 'm', termination: 'last_standing',
      ranking: [{ seats: [2] }, { seats: [0, 3] }, { seats: [1] }],
      verdicts: [{ seat: 1, kind: 1, detail: 'no answer in 1000 ms', latencyUs: '1000500' }],
      hands: [{ seat: 0, cards: [6, 17] }, { seat: 1, cards: [] }],
    },
  })).matchEnd;
  const r = MatchResult.fromProto(end);
  assert.deepEqual(r.ranking, [[2], [0, 3], [1]]);
  assert.deepEqual(r.verdicts, [{ seat: 1, kind: 'timeout', detail: 'no answer in 1000 ms', latencyUs: 1000500 }]);
  assert.deepEqual(r.hands, { 0: ['0', '99'], 1: [] });
  assert.deepEqual([0, 1, 2, 3].map((s) => r.placeOf(s)), [2, 4, 1, 2]);
  assert.equal(new MatchResult('m', [], 'aborted', [], {}).placeOf(0), 0);
});

test('Random replays from its seed and spreads evenly', () => {
  const a = new Random(123n);
  const b = new Random('123');
  const xs = Array.from({ length: 5 }, () => a.random());
  assert.deepEqual(xs, Array.from({ length: 5 }, () => b.random()));
  assert.notDeepEqual(xs, Array.from({ length: 5 }, () => new Random(124n).random()));
  const r = new Random(2n ** 64n - 1n);
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 4000; i++) counts[r.randrange(4)]++;
  for (const c of counts) assert.ok(c > 850 && c < 1150, `uneven: ${counts}`);
  assert.deepEqual(new Random(5).shuffle([1, 2, 3, 4, 5]).sort(), [1, 2, 3, 4, 5]);
  assert.ok(['x', 'y'].includes(new Random(5).choice(['x', 'y'])));
  assert.throws(() => r.randrange(0), RangeError);
});
