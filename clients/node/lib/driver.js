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

// A bot dials a stranger's referee, which must not be able to exhaust its memory: the
// events kept for one match (a whole real match is a few thousand), and the matches
// started and not ended that are kept (a real referee never has this many open with one
// bot process). The same numbers in every SDK.
const MAX_MATCH_EVENTS = 100000;
const MAX_OPEN_MATCHES = 64;
// A referee's string printed (a reason, a match id) is cut after this many characters:
// a 1 MiB reason in a loop wrote gigabytes of stderr.
const MAX_SHOWN_CHARS = 300;

/** A logger that drops everything (the default of a Driver built without one). */
const SILENT = Object.freeze({ debug() {}, warn() {}, error() {} });

/**
 * `text` (a string from the referee) as it may be printed: every character that is not
 * printable (controls, C0 and C1, DEL; format characters such as U+202E) escaped as \xNN or
 * \uNNNN, and cut after `limit` characters, so that a referee can neither rewrite the
 * bot author's terminal nor fill their disk.
 */
function printable(text, limit = MAX_SHOWN_CHARS) {
  text = String(text);
  let out = '';
  let count = 0;
  let index = 0;  // in UTF-16 units, where the characters not shown begin
  for (const char of text) {
    if (count === limit) break;
    out += /[\p{Cc}\p{Cf}]/u.test(char) ? escaped(char.codePointAt(0)) : char;
    count += 1;
    index += char.length;
  }
  if (index === text.length) return out;
  let more = 0;  // characters, not UTF-16 units: the second half of a pair is not counted
  for (let i = index; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xdc00 || unit > 0xdfff) more += 1;
  }
  return `${out}... (${more} more characters)`;
}

function escaped(code) {
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}

/**
 * The referee broke the protocol in a way the bot cannot play on with: the session ends
 * as when the connection drops (the client reconnects, then gives up).
 */
class RefereeError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RefereeError';
  }
}

/** The referee refused this bot's Hello. */
class RefusedError extends Error {
  constructor(refusal) {
    const code = nameOf(REFUSAL_CODES, refusal.code);
    super(`referee refused the connection (${code}): ${printable(refusal.reason)}`);
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
    /** @type {Map<string, Match>} the matches in progress, by id, the one heard of least
     * recently first (at most MAX_OPEN_MATCHES) */
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
   * Throws RefusedError on a refusal, RefereeError on a match past MAX_MATCH_EVENTS;
   * anything the bot's code throws propagates.
   * @returns {Promise<object[]>}
   */
  async handle(msg) {
    switch (msg.kind) {
      case 'turn': {
        const action = await this._turn(msg.turn);
        return action ? [action] : [];
      }
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
          this._keep(known);
          this._replayed.set(start.matchId, known._raw.length);
          return [];
        }
        const match = Match.fromProto(start);
        this._keep(match);
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

  /**
   * Remember `match` as the one heard of last; beyond MAX_OPEN_MATCHES, forget the one
   * heard of least recently (a later message for it is one for a match never started).
   */
  _keep(match) {
    this.matches.delete(match.matchId);  // a Map iterates in insertion order: to its end
    this.matches.set(match.matchId, match);
    if (this.matches.size <= MAX_OPEN_MATCHES) return;
    const [oldest] = this.matches.keys();
    this.log.debug(`forgetting match ${printable(oldest)}: more than ${MAX_OPEN_MATCHES} open`);
    this.matches.delete(oldest);
    this._replayed.delete(oldest);
    if (this._openTurn && this._openTurn.turn.matchId === oldest) this._openTurn = null;
  }

  async _events(matchId, events) {
    const match = this.matches.get(matchId);
    if (!match) return null;
    this._keep(match);
    const seen = this._replayed.get(matchId);
    if (seen !== undefined) {  // the replay may span several messages
      if (seen > events.length) this._replayed.set(matchId, seen - events.length);
      else this._replayed.delete(matchId);
      events = events.slice(seen);
    }
    if (!events.length) return match;
    const start = match._raw.length;
    addEvents(match, events);
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
      addEvents(match, turn.events);
      this._keep(match);
    }
    // the turn before is no longer open, answered or not
    this._openTurn = null;
    // a bot written to docs/bots.md reads view.legal[0] and its own seat's entry: a turn
    // that breaks either is not the bot's to play, and a referee that sends it is broken
    const seat = turn.view ? turn.view.seat : 0;
    const seats = turn.view ? turn.view.seats.length : 0;
    const what = !turn.legal.length ? 'offers no legal card'
      : !(seat >= 0 && seat < seats) ? `puts the bot at seat ${seat} of ${seats}` : null;
    if (what) {
      this.log.warn(`the referee's turn ${turn.turnId} of match ${printable(turn.matchId)} ${what}; ` +
        'not answered');
      return null;
    }
    const view = new View(turn, match);
    const card = await this.bot.choose(view);
    checkCard(card, view, 'choose()');
    this._openTurn = { turn, tried: new Set([card]) };
    return this._action(turn.turnId, card);
  }

  async _rejected(rejected) {
    const code = nameOf(ERROR_CODES, rejected.code);
    const open = this._openTurn;
    // turn ids are compared as the decimal strings they arrive as: exact at any size. A
    // rejection of no open turn is not this bot's news, and printing each one let a
    // referee fill the disk.
    if (!open || open.turn.turnId !== rejected.turnId) {
      if (this.log.debugging) {
        this.log.debug(`ignoring a rejection (${code}) of turn ${rejected.turnId}, not the open one: ` +
          printable(rejected.reason));
      }
      return null;
    }
    this.log.warn(`action rejected (${code}): ${printable(rejected.reason)}`);
    if (!RETRIED_CODES.has(code)) return null;
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

/**
 * Append `events` to what `match` keeps, one by one (a spread of ~150000 arguments
 * overflows the stack). Throws RefereeError, keeping none of them, if that would take the
 * match past MAX_MATCH_EVENTS.
 */
function addEvents(match, events) {
  if (match._raw.length + events.length > MAX_MATCH_EVENTS) {
    throw new RefereeError(`the referee sent more than ${MAX_MATCH_EVENTS} events for match ` +
      printable(match.matchId));
  }
  for (const event of events) match._raw.push(event);
}

/** Whether `bot` inherits hook `name` from the Bot base class, which does nothing. */
function isDefaultHook(bot, name) {
  return bot[name] === Bot.prototype[name];
}

module.exports = {
  Driver, RefereeError, RefusedError, PROTOCOL_VERSION, SILENT, MAX_MATCH_EVENTS, MAX_OPEN_MATCHES,
  asBot, printable,
};
