'use strict';
/**
 * Read-only views of the referee's messages, cards as tokens ("7", "P2", "99").
 *
 * They wrap the decoded messages (as @grpc/proto-loader gives them: camelCase fields,
 * enums as numbers, 64-bit integers as decimal strings) and convert on access, so a bot
 * pays only for what it reads. Field names are the Python SDK's in camelCase
 * (turn_id -> turnId, hand_size -> handSize, ...).
 */

/** Token of each ono99.v1.Card value (index = enum number; 0 is unspecified). */
const TOKENS = Object.freeze([
  '', '-10', 'R', 'P2', 'DP', 'H',
  '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '99',
]);

/** ono99.v1.Card value of each token. */
const CARD_VALUES = Object.freeze(Object.fromEntries(
  TOKENS.map((t, i) => [t, i]).filter(([t]) => t !== ''),
));

// Names of the protocol's other enums, by number, without their prefix and in lower case
// (as the Python SDK reports them). test/model.test.js checks them against the .proto.
const REFUSAL_CODES = Object.freeze([
  'unspecified', 'bad_token', 'token_in_use', 'unsupported_protocol', 'no_hello', 'shutting_down',
  'too_many', 'bad_hello',
]);
const ERROR_CODES = Object.freeze([
  'unspecified', 'not_your_turn', 'not_in_hand', 'illegal_play', 'stale_turn', 'malformed',
]);
const VERDICT_KINDS = Object.freeze([
  'unspecified', 'timeout', 'disconnected', 'crashed', 'illegal', 'aborted', 'retired', 'absent',
]);

/** The token of a Card enum value ("?" for a value this SDK does not know). */
function tokenOf(card) {
  return card > 0 && card < TOKENS.length ? TOKENS[card] : '?';
}

function tokens(cards) {
  return cards.map(tokenOf);
}

function nameOf(names, value) {
  return names[value] || 'unknown';
}

/** The rules of a match: ruleset, every option (as text), seats, limit. */
class Rules {
  constructor(ruleset, options, seats, limit) {
    this.ruleset = ruleset;
    this.options = options;
    this.seats = seats;
    this.limit = limit;
    Object.freeze(this);
  }

  static fromProto(msg) {
    return new Rules(msg.ruleset, Object.freeze({ ...msg.options }), msg.seats, msg.limit);
  }
}

/**
 * One public event: `kind` plus the fields that kind has.
 * Kinds: deal, play, four99, draw, reshuffle, lose, token, out, scores, eliminate,
 * forfeit, end (and "unknown" for an event this SDK does not know).
 */
function eventFromProto(msg) {
  const e = msg.kind ? msg[msg.kind] : null;
  let event;
  switch (msg.kind) {
    case 'cardPlayed': event = { kind: 'play', seat: e.seat, card: tokenOf(e.card), total: e.total }; break;
    case 'cardsDrawn': event = { kind: 'draw', seat: e.seat, count: e.count }; break;
    case 'roundStarted':
      event = { kind: 'deal', round: e.round, dealer: e.dealer, first: e.first, total: e.total }; break;
    case 'fourNinetyNines': event = { kind: 'four99', seat: e.seat, total: e.total }; break;
    case 'reshuffled': event = { kind: 'reshuffle', drawSize: e.drawSize }; break;
    case 'seatLost': event = { kind: 'lose', seat: e.seat }; break;
    case 'tokenLost': event = { kind: 'token', seat: e.seat, tokensLeft: e.tokensLeft }; break;
    // card is null when the seat left the round without playing (CARD_UNSPECIFIED)
    case 'outOfRound': event = { kind: 'out', seat: e.seat, card: e.card ? tokenOf(e.card) : null }; break;
    case 'roundScored': event = { kind: 'scores', scores: Object.freeze([...e.scores]) }; break;
    case 'seatEliminated':
      event = { kind: 'eliminate', seat: e.seat, hand: e.hand.length ? Object.freeze(tokens(e.hand)) : null };
      break;
    case 'seatForfeited':  // together: it left with the seat of the forfeit before (one place)
      event = e.together ? { kind: 'forfeit', seat: e.seat, together: true } : { kind: 'forfeit', seat: e.seat };
      break;
    case 'gameEnded':
      event = { kind: 'end', ranking: rankingOf(e.ranking), termination: e.termination }; break;
    default: event = { kind: 'unknown' };
  }
  return Object.freeze(event);
}

function rankingOf(places) {
  return Object.freeze(places.map((p) => Object.freeze([...p.seats])));
}

/** Public facts about one seat. */
class SeatInfo {
  constructor(msg) {
    this.handSize = msg.handSize;
    this.inGame = msg.inGame;
    this.inRound = msg.inRound;
    this.tokens = msg.tokens;
    this.score = msg.score;
    this.revealed = Object.freeze(tokens(msg.revealed));
    Object.freeze(this);
  }
}

/** A match this bot plays in, and the public history seen so far. */
class Match {
  /**
   * @param {string} matchId
   * @param {number} seat
   * @param {string[]} names every seat's bot name, by seat
   * @param {Rules|null} rules null only for a turn of a match never announced
   * @param {number} moveMs
   * @param {number} bankMs
   * @param {bigint} botSeed
   */
  constructor(matchId, seat, names, rules, moveMs, bankMs, botSeed) {
    this.matchId = matchId;
    this.seat = seat;
    this.names = names;
    this.rules = rules;
    this.moveMs = moveMs;
    this.bankMs = bankMs;
    this.botSeed = botSeed;
    this._raw = [];     // events as received; converted when first read
    this._events = [];
  }

  static fromProto(msg) {
    const tc = msg.timeControl || { moveMs: 0, bankMs: 0 };
    return new Match(msg.matchId, msg.seat, [...msg.seatNames],
      msg.rules ? Rules.fromProto(msg.rules) : null, tc.moveMs, tc.bankMs, BigInt(msg.botSeed));
  }

  /** Every public event of the match so far, in order (do not modify the array). */
  get events() {
    const done = this._events.length;
    for (let i = done; i < this._raw.length; i++) this._events.push(eventFromProto(this._raw[i]));
    return this._events;
  }

  /**
   * Cards played so far, in order (the public discard history); with `thisRound`, only
   * since the current round's deal. Four 99s played together count as four "99"s.
   * @param {{thisRound?: boolean}} [options]
   */
  played({ thisRound = false } = {}) {
    const out = [];
    for (const e of this.events) {
      if (e.kind === 'deal' && thisRound) out.length = 0;
      else if (e.kind === 'play' || (e.kind === 'out' && e.card)) out.push(e.card);
      else if (e.kind === 'four99') out.push('99', '99', '99', '99');
    }
    return out;
  }

  toString() {
    return `Match(${this.matchId}, seat=${this.seat}, names=${this.names.join(',')})`;
  }
}

const NO_VIEW = Object.freeze({
  seat: 0, hand: [], total: 0, direction: 1, toAct: -1, owed: 1, drawSize: 0, discardSize: 0,
  seats: [], round: 0, dealer: 0,
});

/** What this seat may know at its turn, as the referee sent it, cards as tokens. */
class View {
  constructor(turn, match) {
    this._turn = turn;
    this._view = turn.view || NO_VIEW;
    this.match = match;
  }

  /** The turn's id (uint64) as a BigInt; the SDK echoes it exactly, bots need not. */
  get turnId() { return BigInt(this._turn.turnId); }
  /** The distinct cards this seat may play now (never empty). */
  get legal() { return tokens(this._turn.legal); }
  /** Points scoring: nothing is playable within the limit; the card played takes the
   * seat out of the round. */
  get overLimit() { return this._turn.overLimit; }
  get moveMs() { return this._turn.moveMs; }
  get bankMs() { return this._turn.bankMs; }
  /** The referee's measurement of the previous answer, in µs (a number: exact below 2^53 µs). */
  get previousLatencyUs() { return Number(this._turn.previousLatencyUs); }
  get seat() { return this._view.seat; }
  /** This seat's hand, in Card enum order. */
  get hand() { return tokens(this._view.hand); }
  get total() { return this._view.total; }
  /** 1 clockwise, -1 counter-clockwise. */
  get direction() { return this._view.direction; }
  get toAct() { return this._view.toAct; }
  /** Cards still to play this turn: 1, or 2 before the first card of an owed pair. */
  get owed() { return this._view.owed; }
  get drawSize() { return this._view.drawSize; }
  get discardSize() { return this._view.discardSize; }
  get round() { return this._view.round; }
  get dealer() { return this._view.dealer; }
  /** The highest total a play may reach (undefined for a match never announced). */
  get limit() { return this.match.rules ? this.match.rules.limit : undefined; }
  /** One SeatInfo per seat. */
  get seats() { return this._view.seats.map((s) => new SeatInfo(s)); }

  /**
   * The seat that acts after `seat` (default: this one) in the current direction,
   * skipping seats no longer in the round.
   */
  nextSeat(seat = this.seat) {
    const seats = this._view.seats;
    const n = seats.length;
    let s = seat;
    for (let i = 0; i < n; i++) {
      s = (((s + this.direction) % n) + n) % n;
      if (seats[s].inRound) return s;
    }
    return s;
  }

  toString() {
    return `View(seat=${this.seat}, hand=[${this.hand}], legal=[${this.legal}], ` +
      `total=${this.total}, owed=${this.owed})`;
  }
}

/** How a match ended, as the referee told this bot. */
class MatchResult {
  constructor(matchId, ranking, termination, verdicts, hands) {
    this.matchId = matchId;
    this.ranking = ranking;          // arrays of seats, best first; tied seats share one
    this.termination = termination;  // "last_standing", "target_reached", "max_plays", "aborted"
    this.verdicts = verdicts;        // [{seat, kind, detail, latencyUs}]
    this.hands = hands;              // {seat: [tokens]}: every hand, revealed
    Object.freeze(this);
  }

  static fromProto(msg) {
    const hands = {};
    for (const h of msg.hands) hands[h.seat] = Object.freeze(tokens(h.cards));
    const verdicts = msg.verdicts.map((v) => Object.freeze({
      seat: v.seat, kind: nameOf(VERDICT_KINDS, v.kind), detail: v.detail, latencyUs: Number(v.latencyUs),
    }));
    return new MatchResult(msg.matchId, rankingOf(msg.ranking), msg.termination,
      Object.freeze(verdicts), Object.freeze(hands));
  }

  /** `seat`'s place, 1 = best; tied seats share the best place of their group; 0 when
   * the match has no ranking (it was aborted). */
  placeOf(seat) {
    if (!this.ranking.length) return 0;
    let place = 1;
    for (const group of this.ranking) {
      if (group.includes(seat)) return place;
      place += group.length;
    }
    return place;
  }
}

module.exports = {
  TOKENS, CARD_VALUES, REFUSAL_CODES, ERROR_CODES, VERDICT_KINDS,
  tokenOf, tokens, nameOf, eventFromProto, Rules, SeatInfo, Match, View, MatchResult,
};
