'use strict';
/** The Driver through the FakeReferee: what a bot sees and answers, message by message. */

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { Bot, Driver, RefusedError } = require('..');
const { loadProtocol } = require('../lib/proto');
const { FakeReferee } = require('../testing');
const { msgs } = require('./support/fake-server');

class Lowest extends Bot {
  name = 'lowest';

  choose(view) {
    if (view.owed === 2) {
      for (const card of ['R', 'P2', 'H']) if (view.legal.includes(card)) return card;
    }
    return view.legal[0];
  }
}

test('choose gets the turn; its token goes back as the Card enum', async () => {
  const ref = await FakeReferee.start(new Lowest(), { seats: 3 });
  ref.event('play', { seat: 2, card: 'P2', total: 40 });
  assert.equal(await ref.turn({ hand: ['5', 'P2', '9', 'R'], total: 40, owed: 2 }), 'R');
  assert.equal(await ref.turn({ hand: ['-10', '4', '9'], legal: ['4', '9'], total: 60 }), '4');
  assert.deepEqual(ref.sent.map((m) => m.action), [{ turnId: '1', card: 2 }, { turnId: '2', card: 10 }]);
  await ref.end([[0], [2], [1]]);
});

test('64-bit turn ids are echoed bit for bit, through the real encoding', async () => {
  const ref = await FakeReferee.start(new Lowest());
  for (const id of ['9223372036854775807', '18446744073709551615', 2n ** 53n + 1n, '1']) {
    await ref.turn({ hand: ['7'], turnId: id });
    assert.equal(ref.lastAction.turnId, String(id));
    assert.equal(ref.lastAction.card, '7');
  }
  await ref.turn({ hand: ['7'], turnId: '18446744073709551615' });
  assert.equal(await ref.reject('pretend'), null);  // the only legal card was tried
  await ref.turn({ hand: ['7', '8'], turnId: '18446744073709551614' });
  assert.equal(await ref.reject('pretend'), '8');
  assert.equal(ref.lastAction.turnId, '18446744073709551614');
});

test('a rejection is retried with a legal card not tried yet, then nothing', async () => {
  const ref = await FakeReferee.start(new Lowest(), { ruleset: 'classic' });
  assert.equal(await ref.turn({ hand: ['-10', '4', '9', 'H'], total: 60 }), '-10');
  assert.equal(await ref.reject('pretend it was refused'), '4');
  assert.equal(await ref.reject(), '9');
  assert.equal(await ref.reject(), 'H');
  assert.equal(await ref.reject(), null);
  await ref.end([[0], [1]]);
});

test('a rejection of another turn id is ignored', async () => {
  const ref = await FakeReferee.start(new Lowest());
  await ref.turn({ hand: ['7', '8'], turnId: 10n });
  ref.turnId = '11';
  assert.equal(await ref.reject('stale'), null);
});

test('only a refusal of the card is answered with another card', async () => {
  // every refusal counts against the bot: after one of the turn (over, or not its own) any
  // card is refused alike, and another card sent wasted one more (they were resent)
  const codes = {
    not_in_hand: 2, illegal_play: 3, malformed: 5, not_your_turn: 1, stale_turn: 4, unspecified: 0,
    newer: 42,
  };
  for (const [name, code] of Object.entries(codes)) {
    const ref = await FakeReferee.start(new Lowest());
    await ref.turn({ hand: ['7', '8', '9'] });
    const retried = ['not_in_hand', 'illegal_play', 'malformed'].includes(name);
    assert.equal(await ref.reject('refused', code), retried ? '8' : null, name);
  }
});

test('onRejected may choose the retry, and knows what was tried', async () => {
  const seen = [];
  class Picky extends Lowest {
    onRejected(view, reason, tried) {
      seen.push([reason, [...tried]]);
      return view.legal[view.legal.length - 1];
    }
  }
  const ref = await FakeReferee.start(new Picky());
  await ref.turn({ hand: ['1', '2', '3'] });
  assert.equal(await ref.reject('too low'), '3');
  assert.deepEqual(seen, [['too low', ['1']]]);
});

test('a choose() that returns no card token throws, naming what it returned; nothing is sent', async () => {
  // it went out as CARD_UNSPECIFIED: refused as malformed, a refusal counted, and the
  // default onRejected quietly played another card
  const turn = { matchId: 'm', turnId: '3', legal: [7], events: [], view: { seat: 0, hand: [7], seats: [{}] } };
  for (const [returned, words] of [['eleven', "it returned 'eleven', which is not a card token"],
    [7, 'it returned 7 (number)'], [undefined, 'it returned undefined (undefined)'],
    [null, 'it returned null (null)']]) {
    const driver = new Driver({ choose: () => returned }, { log: { debug() {}, warn() {}, error() {} } });
    await assert.rejects(driver.handle({ kind: 'turn', turn }), (err) => {
      assert.ok(err instanceof TypeError);
      assert.equal(err.message, `choose() must return one of view.legal (a string such as '1'), ${words}`);
      return true;
    });
  }
});

test('onRejected is held to the same rule; null still means wait', async () => {
  class Odd extends Bot {
    choose() { return '1'; }
    onRejected(view, reason) { return reason === 'wait' ? null : 12; }
  }
  const ref = await FakeReferee.start(new Odd());
  await ref.turn({ hand: ['1', '2'] });
  assert.equal(await ref.reject('wait'), null);
  await assert.rejects(ref.reject('again'), /onRejected\(\) must return one of view.legal .*it returned 12 \(number\)/);
});

test('events reach onEvent in order, inside turns, Events messages and MatchEnd', async () => {
  const got = [];
  class Listener extends Lowest {
    onEvent(event, match) { got.push([event.kind, match.events.length]); }
  }
  const ref = await FakeReferee.start(new Listener(), { seats: 3 });
  ref.event('deal', { dealer: 2, first: 0 });
  ref.event('play', { seat: 0, card: '7', total: 1 });
  await ref.flush();
  ref.event('draw', { seat: 0 });
  ref.event('play', { seat: 1, card: '10', total: 11 });
  await ref.turn({ hand: ['1'] });
  ref.event('lose', { seat: 1 });
  ref.event('eliminate', { seat: 1, hand: ['99'] });
  await ref.end([[0], [2], [1]]);
  assert.deepEqual(got, [['deal', 2], ['play', 2], ['draw', 4], ['play', 4], ['lose', 6], ['eliminate', 6]]);
});

test('hooks: match start (rules, seat, seed) and match end (result, match)', async () => {
  const log = [];
  class Hooked extends Lowest {
    onMatchStart(match) { log.push(['start', match.seat, match.rules.ruleset, match.rules.limit, match.botSeed]); }
    onMatchEnd(result, match) { log.push(['end', result.termination, result.placeOf(1), match.matchId, result.verdicts]); }
  }
  const ref = await FakeReferee.start(new Hooked(), { seat: 1, ruleset: 'classic-set99', botSeed: 2n ** 63n });
  await ref.end([[1], [0]], { termination: 'target_reached', verdicts: [{ seat: 0, kind: 4, detail: 'x' }] });
  assert.deepEqual(log, [
    ['start', 1, 'classic-set99', 99, 2n ** 63n],
    ['end', 'target_reached', 1, 'fake-1', [{ seat: 0, kind: 'illegal', detail: 'x', latencyUs: 0 }]],
  ]);
});

test('bot.random is re-seeded from the bot seed at every match start', async () => {
  class Dice extends Bot {
    choose(view) {
      this.rolls.push(this.random.random());
      return view.legal[0];
    }
  }
  const rolls = [];
  for (const seed of [42n, 42n, 43n]) {
    const bot = new Dice();
    bot.rolls = [];
    const ref = await FakeReferee.start(bot, { botSeed: seed });
    await ref.turn({ hand: ['1'] });
    await ref.turn({ hand: ['1'] });
    rolls.push(bot.rolls);
  }
  assert.deepEqual(rolls[0], rolls[1]);
  assert.notDeepEqual(rolls[0], rolls[2]);
});

test('after a reconnection the match goes on: no second match start, no event seen twice', async () => {
  const log = [];
  class Tracker extends Lowest {
    onMatchStart(match) { log.push(['start', match.matchId]); }
    onEvent(event) { log.push([event.kind, event.seat ?? null]); }
    choose(view) {
      log.push(['choose', view.match.events.length]);
      return super.choose(view);
    }
  }
  const ref = await FakeReferee.start(new Tracker(), { seats: 3 });
  const match = ref.driver.matches.get('fake-1');
  ref.event('deal', { dealer: 2, first: 0 });
  await ref.turn({ hand: ['1', '2'] });
  ref.event('play', { seat: 0, card: '1', total: 1 });
  ref.event('play', { seat: 1, card: '5', total: 6 });
  await ref.flush();
  await ref.reconnect();  // the turn comes again with the deal and both plays, then a draw
  ref.event('draw', { seat: 2 });
  assert.equal(await ref.turn({ hand: ['2', '3'] }), '2');
  assert.equal(ref.driver.matches.get('fake-1'), match, 'the match object was replaced');
  assert.deepEqual(match.events.map((e) => e.kind), ['deal', 'play', 'play', 'draw']);
  assert.deepEqual(match.played(), ['1', '5']);
  assert.deepEqual(log, [
    ['start', 'fake-1'], ['deal', null], ['choose', 1], ['play', 0], ['play', 1],
    ['draw', 2], ['choose', 4],
  ]);
  await ref.reconnect();  // a second drop: the replay is the whole match again
  await ref.end([[0], [1], [2]]);
  assert.equal(match.events.length, 4);
});

test('a replay may span messages; a match start for another id is a new match', async () => {
  const starts = [];
  const d = new Driver({ choose: (view) => view.legal[0], onMatchStart: (m) => starts.push(m.matchId) });
  const { play } = loadProtocol();
  const handle = (msg) => d.handle(play.responseDeserialize(play.responseSerialize(msg)));
  const events = (matchId, cards) => ({ events: { matchId, events: cards.map((c) => msgs.play(1, c, 0)) } });
  await handle(msgs.matchStart('m1'));
  await handle(events('m1', [7, 8, 9]));
  await handle(msgs.matchStart('m1'));  // reconnected: the 3 events it holds come again
  await handle(events('m1', [7, 8]));   // 2 of them here
  await handle(msgs.matchStart('m2'));  // a match begun meanwhile
  await handle(msgs.turn('m1', 1, { events: [9, 10].map((c) => msgs.play(1, c, 0)) }));  // the third, a new one
  assert.deepEqual(d.matches.get('m1').played(), ['1', '2', '3', '4']);
  assert.deepEqual(starts, ['m1', 'm2']);
  await handle(msgs.turn('m2', 2, { events: [msgs.play(1, 7, 0)] }));
  assert.deepEqual(d.matches.get('m2').played(), ['1']);
});

test('a plain object, a bare function and an async choose are bots too', async () => {
  const plain = await FakeReferee.start({ name: 'plain', choose: (view) => view.legal.at(-1) });
  assert.equal(await plain.turn({ hand: ['1', '2'] }), '2');
  const fn = await FakeReferee.start((view) => view.legal[0]);
  assert.equal(await fn.turn({ hand: ['3', '4'] }), '3');
  assert.equal(await fn.reject(), '4');  // the default onRejected
  const slow = await FakeReferee.start({
    async choose(view) {
      await new Promise((r) => setTimeout(r, 5));
      return view.legal[1];
    },
  });
  assert.equal(await slow.turn({ hand: ['5', '6'] }), '6');
});

test('a class instead of an instance, or no choose, is a clear TypeError', () => {
  assert.throws(() => new Driver(Lowest), /pass a bot instance \(new Lowest\(\)\), not the class/);
  assert.throws(() => new Driver({}), /needs a choose\(view\) method/);
  assert.throws(() => new Driver(null), /needs a choose\(view\) method/);
});

test('the hello: the given name, else the bot\'s; protocol version 1; a resume key if given', () => {
  const d = new Driver(new Lowest());
  assert.deepEqual(d.hello('t', undefined, 'sdk/1'),
    { hello: { name: 'lowest', token: 't', protocolVersion: 1, sdk: 'sdk/1', resumeKey: '' } });
  assert.equal(d.hello('t', undefined, 'sdk/1', 'k').hello.resumeKey, 'k');
  assert.equal(d.hello('t', 'other').hello.name, 'other');
  assert.equal(new Driver({ choose() {} }).hello('t').hello.name, 'bot');
});

test('refusal throws RefusedError; goodbye finishes; unknown kinds are ignored', async () => {
  const d = new Driver(new Lowest());
  assert.deepEqual(await d.handle({ kind: 'somethingNew' }), []);
  await assert.rejects(d.handle({ kind: 'refusal', refusal: { code: 2, reason: 'in use' } }), (err) => {
    assert.ok(err instanceof RefusedError);
    assert.equal(err.code, 'token_in_use');
    assert.equal(err.message, 'referee refused the connection (token_in_use): in use');
    return true;
  });
  const e = new Driver(new Lowest());
  await e.handle({ kind: 'goodbye', goodbye: { reason: 'bye' } });
  assert.ok(e.finished);
});

test('a turn of a match never announced is answered anyway', async () => {
  const d = new Driver(new Lowest());
  const [answer] = await d.handle({
    kind: 'turn',
    turn: { matchId: 'x', turnId: '9', legal: [8], events: [], view: { seat: 1, hand: [8], seats: [{}, {}] } },
  });
  assert.deepEqual(answer, { action: { turnId: '9', card: 8 } });
});

test('the Bot base class: default name, choose must be implemented', () => {
  assert.equal(new Bot().name, 'bot');
  assert.throws(() => new Bot().choose({}), /Bot\.choose\(view\) is not implemented/);
});
