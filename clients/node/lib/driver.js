'use strict';
/**
 * The bot's side of the protocol, independent of the transport.
 *
 * Driver.handle takes each message the referee sends (decoded as @grpc/proto-loader
 * decodes it) and returns the messages to send back. The gRPC client (client.js) and the
 * fake referee (testing.js) both drive a bot through it, so what a unit test exercises is
 * what runs against a real referee.
 */

const { inspect } = require('node:util');

const { Bot, defaultOnRejected } = require('./bot');
const {
  CARD_VALUES, ERROR_CODES, REFUSAL_CODES, Match, MatchResult, View, nameOf,
} = require('./model');
const { Random } = require('./random');

const PROTOCOL_VERSION = 1;

// Refusals of the card sent, which another card may cure (malformed: no card or an unknown
// one; the turn id was the open turn's). not_your_turn and stale_turn refuse any card
// alike, and each refusal counts against the bot (too many in a match: an ILLEGAL
// verdict), so no card is sent again after them, nor after a code this SDK does not know.
const RETRIED_CODES = new Set(['not_in_hand', 'illegal_play', 'malformed']);

/** A logger that drops everything (the default of a Driver built without one). */
const SILENT = Object.freeze({ debug() {}, warn() {}, error() {} });

/** The referee refused this bot's Hello. */
class RefusedError extends Error {
  constructor(refusal) {
    const code = nameOf(REFUSAL_CODES, refusal.code);
    super(`referee refused the connection (${code}): ${refusal.reason}`);
    this.name = 'RefusedError';
    this.code = code;
    this.reason = refusal.reason;
  }
}

/**
 * A bot as the driver calls it: a Bot instance, a plain object with choose(view) and any
 * hooks, or a bare choose function.
 */
function asBot(bot) {
  if (typeof bot === 'function') {
    if (/^class\b/.test(Function.prototype.toString.call(bot))) {
      throw new TypeError(`pass a bot instance (new ${bot.name}()), not the class`);
    }
    return { name: 'bot', choose: bot };
  }
  if (!bot || typeof bot.choose !== 'function') {
    throw new TypeError('a bot needs a choose(view) method (or pass a choose function)');
  }
  return bot;
}

class Driver {
  /**
   * @param {object|Function} bot see asBot
   * @param {{log?: {debug: Function, warn: Function, error: Function}}} [options]
   */
  constructor(bot, { log = SILENT } = {}) {
    this.bot = asBot(bot);
    this.log = log;
    /** @type {Map<string, Match>} the matches in progress, by id */
    this.matches = new Map();
    this.finished = false;
    this.welcome = null;
    this._openTurn = null;  // {turn, tried: Set<string>} of the last turn answered
    // After a reconnection the referee sends a match's events again from its start:
    // match id -> how many of the coming events the bot has already seen.
    /** @type {Map<string, number>} */
    this._replayed = new Map();
  }

  /**
   * The first message of a session. A session after a reconnection starts afresh (no
   * welcome, not finished) but keeps the matches in progress; its hello carries
   * `resumeKey`, the one the referee welcomed the broken session with, which lets it
   * replace that session even if the referee has not noticed it is gone.
   */
  hello(token, name, sdk = '', resumeKey = '') {
    this.finished = false;
    this.welcome = null;
    return {
      hello: {
        name: name || this.bot.name || 'bot', token, protocolVersion: PROTOCOL_VERSION, sdk, resumeKey,
      },
    };
  }

  /**
   * The messages to send in answer to `msg`: an action for a turn, nothing otherwise.
   * Throws RefusedError on a refusal; anything the bot's code throws propagates.
   * @returns {Promise<object[]>}
   */
  async handle(msg) {
    switch (msg.kind) {
      case 'turn':
        return [await this._turn(msg.turn)];
      case 'events':
        await this._events(msg.events.matchId, msg.events.events);
        return [];
      case 'rejected': {
        const retry = await this._rejected(msg.rejected);
        return retry ? [retry] : [];
      }
      case 'matchStart': {
        const start = msg.matchStart;
        const known = this.matches.get(start.matchId);
        if (known) {  // we reconnected mid-match: the same match goes on, told from its start
          this._replayed.set(start.matchId, known._raw.length);
          return [];
        }
        const match = Match.fromProto(start);
        this.matches.set(start.matchId, match);
        this.bot.random = new Random(match.botSeed);
        if (this.bot.onMatchStart) await this.bot.onMatchStart(match);
        return [];
      }
      case 'matchEnd': {
        const end = msg.matchEnd;
        await this._events(end.matchId, end.events);
        const match = this.matches.get(end.matchId) || null;
        this.matches.delete(end.matchId);
        this._replayed.delete(end.matchId);
        this._openTurn = null;
        if (this.bot.onMatchEnd) await this.bot.onMatchEnd(MatchResult.fromProto(end), match);
        return [];
      }
      case 'welcome':
        this.welcome = msg.welcome;
        return [];
      case 'refusal':
        this.finished = true;
        throw new RefusedError(msg.refusal);
      case 'goodbye':
        this.finished = true;
        return [];
      default:  // a message kind newer than this SDK: nothing to answer
        this.log.debug(`ignoring a message of unknown kind ${msg.kind}`);
        return [];
    }
  }

  async _events(matchId, events) {
    const match = this.matches.get(matchId);
    if (!match) return null;
    const seen = this._replayed.get(matchId);
    if (seen !== undefined) {  // the replay may span several messages
      if (seen > events.length) this._replayed.set(matchId, seen - events.length);
      else this._replayed.delete(matchId);
      events = events.slice(seen);
    }
    if (!events.length) return match;
    const start = match._raw.length;
    match._raw.push(...events);
    // events are converted for the bot only if it listens to them (or reads match.events)
    if (this.bot.onEvent && !isDefaultHook(this.bot, 'onEvent')) {
      const all = match.events;
      for (let i = start; i < all.length; i++) await this.bot.onEvent(all[i], match);
    }
    return match;
  }

  async _turn(turn) {
    let match = await this._events(turn.matchId, turn.events);
    if (!match) {  // a turn of a match we were never told of: answer anyway
      match = new Match(turn.matchId, turn.view ? turn.view.seat : 0, [], null, turn.moveMs,
        turn.bankMs, 0n);
      match._raw.push(...turn.events);
      this.matches.set(turn.matchId, match);
    }
    const view = new View(turn, match);
    const card = await this.bot.choose(view);
    checkCard(card, view, 'choose()');
    this._openTurn = { turn, tried: new Set([card]) };
    return this._action(turn.turnId, card);
  }

  async _rejected(rejected) {
    const code = nameOf(ERROR_CODES, rejected.code);
    this.log.warn(`action rejected (${code}): ${rejected.reason}`);
    const open = this._openTurn;
    // turn ids are compared as the decimal strings they arrive as: exact at any size
    if (!open || open.turn.turnId !== rejected.turnId || !RETRIED_CODES.has(code)) return null;
    const view = new View(open.turn, this.matches.get(open.turn.matchId));
    const card = this.bot.onRejected
      ? await this.bot.onRejected(view, rejected.reason, open.tried)
      : defaultOnRejected(view, rejected.reason, open.tried);
    if (card === null || card === undefined) return null;
    checkCard(card, view, 'onRejected()');
    open.tried.add(card);
    return this._action(open.turn.turnId, card);
  }

  _action(turnId, card) {
    // turnId is the string the turn arrived with: echoed without any conversion
    return { action: { turnId, card: CARD_VALUES[card] } };
  }
}

/**
 * Throw unless `card` is a card token (a string such as '7'). Anything else (a number,
 * undefined, an object) could only go out as a malformed action: the referee would refuse
 * it, onRejected would quietly play another card, and the bug would be paid for and hidden.
 * It ends the bot as an error thrown in choose() does. A token that is not in view.legal
 * is sent: the referee says why it refuses it, and onRejected may try another card.
 */
function checkCard(card, view, hook) {
  if (typeof card === 'string' && Object.hasOwn(CARD_VALUES, card)) return;
  const example = view.legal.length ? view.legal[0] : '7';
  const what = typeof card === 'string' ? `${inspect(card)}, which is not a card token`
    : `${inspect(card)} (${card === null ? 'null' : typeof card})`;
  throw new TypeError(`${hook} must return one of view.legal (a string such as ` +
    `${inspect(example)}), it returned ${what}`);
}

/** Whether `bot` inherits hook `name` from the Bot base class, which does nothing. */
function isDefaultHook(bot, name) {
  return bot[name] === Bot.prototype[name];
}

module.exports = { Driver, RefusedError, PROTOCOL_VERSION, SILENT, asBot };
