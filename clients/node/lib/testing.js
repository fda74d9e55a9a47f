'use strict';
/**
 * A scripted fake referee, to unit-test a bot without a server.
 *
 *     const { FakeReferee } = require('ono99-bot/testing');   // or clients/node/testing
 *
 *     const ref = await FakeReferee.start(new MyBot(), { seats: 3 });
 *     ref.event('play', { seat: 2, card: '7', total: 40 });
 *     const card = await ref.turn({ hand: ['5', 'P2', '9', 'R'], legal: ['5', 'P2', 'R'], total: 40 });
 *     assert.equal(card, 'P2');
 *     await ref.end([[0], [2], [1]]);
 *
 * It drives the bot through the same Driver as the real client, and every message makes
 * the round trip through the protocol's real encoding (what the referee would send, as
 * the client would decode it; what the bot answers, as the referee would read it).
 * Only the network is missing.
 */

const { Driver } = require('./driver');
const { CARD_VALUES, tokenOf } = require('./model');
const { loadProtocol } = require('./proto');

function card(token) {
  if (!Object.hasOwn(CARD_VALUES, token)) throw new RangeError(`not a card token: ${JSON.stringify(token)}`);
  return CARD_VALUES[token];
}

const EVENT_BUILDERS = {
  play: (f) => ({ cardPlayed: { seat: f.seat, card: card(f.card), total: f.total ?? 0 } }),
  draw: (f) => ({ cardsDrawn: { seat: f.seat, count: f.count ?? 1 } }),
  deal: (f) => ({
    roundStarted: { round: f.round ?? 1, dealer: f.dealer ?? 0, first: f.first ?? 1, total: f.total ?? 0 },
  }),
  four99: (f) => ({ fourNinetyNines: { seat: f.seat, total: f.total ?? 0 } }),
  reshuffle: (f) => ({ reshuffled: { drawSize: f.drawSize ?? 0 } }),
  lose: (f) => ({ seatLost: { seat: f.seat } }),
  token: (f) => ({ tokenLost: { seat: f.seat, tokensLeft: f.tokensLeft ?? 0 } }),
  out: (f) => ({ outOfRound: { seat: f.seat, card: f.card ? card(f.card) : 0 } }),
  scores: (f) => ({ roundScored: { scores: f.scores } }),
  eliminate: (f) => ({ seatEliminated: { seat: f.seat, hand: (f.hand || []).map(card) } }),
  forfeit: (f) => ({ seatForfeited: { seat: f.seat, together: !!f.together } }),
  end: (f) => ({
    gameEnded: { ranking: (f.ranking || []).map((seats) => ({ seats })), termination: f.termination ?? '' },
  }),
};

/** Plays the referee's part of one match with a bot, message by message. */
class FakeReferee {
  /**
   * Start a match with `bot` (sends it MatchStart); use this, not the constructor.
   * @param {object|Function} bot
   * @param {object} [options]
   * @param {number} [options.seats] 2
   * @param {number} [options.seat] the bot's seat, 0
   * @param {string} [options.ruleset] "modern"
   * @param {Object<string,string>} [options.options] the ruleset's options, as text
   * @param {number} [options.limit] 98 for modern, else 99
   * @param {bigint|string|number} [options.botSeed] 1
   * @param {string} [options.matchId] "fake-1"
   * @param {number} [options.moveMs] 1000
   * @param {number} [options.bankMs] 10000
   * @param {string} [options.protoDir] see proto.js
   */
  static async start(bot, options = {}) {
    const ref = new FakeReferee(bot, options);
    await ref._send(ref._matchStart());
    return ref;
  }

  constructor(bot, {
    seats = 2, seat = 0, ruleset = 'modern', options = {}, limit, matchId = 'fake-1',
    moveMs = 1000, bankMs = 10000, botSeed = 1, protoDir,
  } = {}) {
    this.protocol = loadProtocol(protoDir);
    this.driver = new Driver(bot);
    this.bot = this.driver.bot;
    this.seats = seats;
    this.seat = seat;
    this.ruleset = ruleset;
    this.options = options;
    this.limit = limit ?? (ruleset === 'modern' ? 98 : 99);
    this.matchId = matchId;
    this.moveMs = moveMs;
    this.bankMs = bankMs;
    this.botSeed = String(botSeed);
    /** The id of the last turn asked, a decimal string (uint64). */
    this.turnId = '0';
    /** Every message the bot sent, as the referee decoded it. */
    this.sent = [];
    this._pending = [];
    this._told = [];  // the events sent since the match (re)started, for reconnect()
  }

  _matchStart() {
    const n = this.seats;
    return {
      matchStart: {
        matchId: this.matchId, seat: this.seat, seatNames: Array.from({ length: n }, (_, i) => `seat${i}`),
        rules: { ruleset: this.ruleset, options: this.options, seats: n, limit: this.limit },
        timeControl: { moveMs: this.moveMs, bankMs: this.bankMs },
        botSeed: this.botSeed,
      },
    };
  }

  /** The queued events, taken to be sent now. */
  _takeEvents() {
    const events = this._pending;
    this._pending = [];
    this._told.push(...events);
    return events;
  }

  /** Deliver `msg` (a RefereeMessage) through the real encoding; the bot's answers. */
  async _send(msg) {
    const { play } = this.protocol;
    const received = play.responseDeserialize(play.responseSerialize(msg));
    const answers = (await this.driver.handle(received))
      .map((a) => play.requestDeserialize(play.requestSerialize(a)));
    this.sent.push(...answers);
    return answers;
  }

  /**
   * Queue a public event; it reaches the bot with the next turn, or at once with flush().
   * Kinds and fields as the SDK's events: play {seat, card, total}, draw {seat, count},
   * deal {round, dealer, first, total}, four99 {seat, total}, reshuffle {drawSize},
   * lose {seat}, token {seat, tokensLeft}, out {seat, card}, scores {scores},
   * eliminate {seat, hand}, forfeit {seat, together}, end {ranking, termination}.
   */
  event(kind, fields = {}) {
    const build = EVENT_BUILDERS[kind];
    if (!build) throw new RangeError(`unknown event kind ${JSON.stringify(kind)}`);
    this._pending.push(build(fields));
  }

  /** Send the queued events in an Events message. */
  async flush() {
    const events = this._takeEvents();
    await this._send({ events: { matchId: this.matchId, events } });
  }

  /**
   * Ask the bot for a card; resolves to the token it answered (null if it sent nothing).
   * @param {object} turn
   * @param {string[]} turn.hand
   * @param {string[]} [turn.legal] default: the hand
   * @param {number} [turn.total] 0
   * @param {number} [turn.direction] 1
   * @param {number} [turn.owed] 1
   * @param {number[]} [turn.handSizes] default: 4 for every seat
   * @param {boolean[]} [turn.inGame] default: every seat in
   * @param {string[][]} [turn.revealed] each seat's hand laid face up, default: none
   * @param {number} [turn.drawSize] 50
   * @param {boolean} [turn.overLimit] false
   * @param {bigint|string|number} [turn.turnId] default: one more than the last
   */
  async turn({
    hand, legal, total = 0, direction = 1, owed = 1, handSizes, inGame, revealed, drawSize = 50,
    overLimit = false, turnId,
  }) {
    this.turnId = String(turnId ?? BigInt(this.turnId) + 1n);
    const n = this.seats;
    const sizes = handSizes || Array(n).fill(4);
    const alive = inGame || Array(n).fill(true);
    const view = {
      seat: this.seat, hand: hand.map(card), total, direction, toAct: this.seat, owed, drawSize,
      seats: Array.from({ length: n }, (_, i) => ({
        handSize: sizes[i], inGame: alive[i], inRound: alive[i], revealed: ((revealed || [])[i] || []).map(card),
      })),
      round: 1, dealer: (((this.seat - 1) % n) + n) % n,
    };
    const events = this._takeEvents();
    return FakeReferee._card(await this._send({
      turn: {
        matchId: this.matchId, turnId: this.turnId, view, legal: (legal ?? hand).map(card),
        overLimit, events, moveMs: this.moveMs, bankMs: this.bankMs,
      },
    }));
  }

  /**
   * The bot's connection dropped and it came back, as a real referee sees it: the match
   * start again, then, with the next message (flush, turn or end), every event of the
   * match from its start before the ones queued since. The SDK keeps the match going: the
   * bot sees no second match start and no event twice.
   */
  async reconnect() {
    this._pending = [...this._told, ...this._pending];
    this._told = [];
    await this._send(this._matchStart());
  }

  /** Refuse the last answer; resolves to the bot's next try (null if it sent nothing).
   * @param {string} [reason]
   * @param {number} [code] an ErrorCode number (3: ILLEGAL_PLAY) */
  async reject(reason = 'illegal', code = 3) {
    return FakeReferee._card(await this._send({ rejected: { turnId: this.turnId, code, reason } }));
  }

  /** End the match. `verdicts` are {seat, kind (a VerdictKind number), detail}; `hands`
   * are {seat: [tokens]}. */
  async end(ranking, { termination = 'last_standing', verdicts = [], hands = {} } = {}) {
    const events = this._takeEvents();
    await this._send({
      matchEnd: {
        matchId: this.matchId, termination, events, verdicts,
        ranking: ranking.map((seats) => ({ seats })),
        hands: Object.entries(hands).map(([seat, cards]) => ({ seat: Number(seat), cards: cards.map(card) })),
      },
    });
  }

  /** The last action the bot sent, as the referee decoded it: {turnId (string), card (token)}. */
  get lastAction() {
    for (let i = this.sent.length - 1; i >= 0; i--) {
      const msg = this.sent[i];
      if (msg.kind === 'action') return { turnId: msg.action.turnId, card: tokenOf(msg.action.card) };
    }
    return null;
  }

  static _card(answers) {
    for (const msg of answers) if (msg.kind === 'action') return tokenOf(msg.action.card);
    return null;
  }
}

module.exports = { FakeReferee };
