'use strict';
/**
 * node-counter: card counting, in Node.js (a port of bots/counter).
 *
 * The cards this seat has not seen (the deck, minus its hand, the discard pile since the
 * last deal or reshuffle, and hands laid face up) are what the other hands are drawn from.
 * For each legal card it estimates the chance that the next seat holds no playable card
 * after it (a hypergeometric draw of that seat's hand size from the unseen cards) and
 * plays the card most likely to make the next seat lose, keeping deflectors for owed pairs
 * and, all else equal, the total low.
 *
 * `--epsilon P` (or ONO99_EPSILON) plays a uniformly random legal card with probability P.
 *
 * The SDK is the arena's (ONO99_NODE_SDK, which the arena that runs the bot sets, or else
 * by its path in the repository), so the bot needs no node_modules of its own: only
 * `npm ci` in clients/node, once for the arena.
 */

const { Bot, run } = require(process.env.ONO99_NODE_SDK || '../../clients/node');

const MODERN_DECK = {
  0: 8, 1: 6, 2: 6, 3: 6, 4: 6, 5: 6, 6: 6, 7: 6, 8: 6, 9: 6, 10: 10, 99: 10, R: 10, '-10': 10, P2: 10,
};
const CLASSIC_DECK = {
  2: 3, 3: 3, 4: 3, 5: 3, 6: 3, 7: 3, 8: 3, 9: 3, 10: 10, H: 4, R: 6, '-10': 4, DP: 2, 99: 4,
};
const NUMBERS = Object.fromEntries(Array.from({ length: 11 }, (_, v) => [String(v), v]));
const FORCING = new Set(['P2', 'DP']);
const MODERN_DEFLECTORS = new Set(['R', 'P2']);
const CLASSIC_DEFLECTORS = new Set(['R', 'H']);

class CounterBot extends Bot {
  name = 'node-counter';

  constructor(epsilon = 0) {
    super();
    this.epsilon = epsilon;
  }

  choose(view) {
    const legal = view.legal;
    // draw the coin and the pick every turn, whatever epsilon is: bots given the same
    // seed then make their random moves at the same moments (common random numbers)
    const coin = this.random.random();
    const pick = this.random.random();
    if (coin < this.epsilon) return legal[Math.floor(pick * legal.length)];
    const rules = view.match.rules;
    const modern = rules.ruleset === 'modern';
    const deflectors = modern ? MODERN_DEFLECTORS : CLASSIC_DEFLECTORS;
    if (view.owed === 2) {
      const deflector = legal.find((card) => deflectors.has(card));
      if (deflector !== undefined) return deflector;
    }
    if (legal.length === 1) return legal[0];
    const unseen = unseenCards(view, modern ? MODERN_DECK : CLASSIC_DECK);
    let pool = 0;
    for (const n of unseen.values()) pool += n;
    const seats = view.seats;
    const inRound = seats.filter((s) => s.inRound).length;
    let best = legal[0];
    let bestStuck = -Infinity;
    let bestLow = -Infinity;
    for (const card of legal) {
      const total = totalAfter(card, view.total, rules.ruleset);
      const next = card !== 'R' || inRound === 2 ? view.nextSeat() : reverseNext(view);
      const size = seats[next].handSize || 4;
      const owesTwo = FORCING.has(card) || (view.owed === 2 && deflectors.has(card));
      let safe = 0;
      for (const [c, n] of unseen) if (playable(c, total, rules, owesTwo && c === 'DP')) safe += n;
      let pStuck = pool >= size ? noneDrawn(pool, safe, size) : 0;
      // a modern hand of four 99s is not stuck: its seat plays them together, draws four
      if (modern && size === 4 && pool >= size) {
        pStuck -= noneDrawn(pool, pool - (unseen.get('99') || 0), 4);
      }
      if (owesTwo) pStuck = 1 - (1 - pStuck) ** 1.7;  // two cards to find: roughly, stuck on either
      const keep = deflectors.has(card) || FORCING.has(card) || card === '-10' ? 0.02 : 0;
      // best: most likely to leave the next seat stuck, then the lowest total
      const stuck = pStuck - keep;
      if (stuck > bestStuck || (stuck === bestStuck && -total > bestLow)) {
        best = card;
        bestStuck = stuck;
        bestLow = -total;
      }
    }
    return best;
  }
}

/** The chance that `size` cards drawn from `pool` include none of its `safe` ones:
 * C(pool - safe, size) / C(pool, size), as a product so it never overflows. */
function noneDrawn(pool, safe, size) {
  let p = 1;
  for (let i = 0; i < size; i++) {
    p *= (pool - safe - i) / (pool - i);
    if (p <= 0) return 0;
  }
  return p;
}

function totalAfter(card, total, ruleset) {
  if (card in NUMBERS) return total + NUMBERS[card];
  if (card === '-10') return ruleset === 'modern' ? Math.max(0, total - 10) : total - 10;
  if (card === '99' && ruleset === 'classic-set99') return 99;
  return total;
}

function playable(card, total, rules, openingPairDp) {
  if (card in NUMBERS) return total + NUMBERS[card] <= rules.limit;
  if (card === '99') {
    if (rules.ruleset === 'classic-set99') return rules.limit >= 99;
    if (rules.ruleset === 'classic') {
      return rules.options.ninety_nine_on_zero === 'true' && ((total % 10) + 10) % 10 === 0;
    }
    return false;
  }
  return !openingPairDp;
}

/** The seat after this one once a reverse has flipped the direction. */
function reverseNext(view) {
  const seats = view.seats;
  const n = seats.length;
  let s = view.seat;
  for (let i = 0; i < n; i++) {
    s = (((s - view.direction) % n) + n) % n;
    if (seats[s].inRound) return s;
  }
  return s;
}

/** The cards this seat has not seen, with their counts (only counts above zero). */
function unseenCards(view, deck) {
  const counts = new Map(Object.entries(deck));
  const take = (card) => counts.set(card, (counts.get(card) || 0) - 1);
  for (const card of view.hand) take(card);
  let pile = [];
  for (const e of view.match.events) {
    if (e.kind === 'deal' || e.kind === 'reshuffle') pile = [];
    else if (e.kind === 'play' || (e.kind === 'out' && e.card)) pile.push(e.card);
    else if (e.kind === 'four99') pile.push('99', '99', '99', '99');
  }
  for (const card of pile) take(card);
  for (const info of view.seats) for (const card of info.revealed) take(card);
  for (const [card, n] of counts) if (n <= 0) counts.delete(card);
  return counts;
}

/** Split off --epsilon (the bot's own option); the SDK's run() parses the rest. */
function splitEpsilon(argv, env) {
  let epsilon = Number(env.ONO99_EPSILON || 0);
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--epsilon') epsilon = Number(argv[++i]);
    else if (argv[i].startsWith('--epsilon=')) epsilon = Number(argv[i].slice('--epsilon='.length));
    else rest.push(argv[i]);
  }
  return { epsilon, rest };
}

module.exports = { CounterBot, noneDrawn, totalAfter, playable, unseenCards };

if (require.main === module) {
  const { epsilon, rest } = splitEpsilon(process.argv.slice(2), process.env);
  if (!(epsilon >= 0 && epsilon <= 1)) {
    process.stderr.write('error: --epsilon takes a probability between 0 and 1\n');
    process.exit(2);
  }
  run(new CounterBot(epsilon), rest).then((code) => process.exit(code));
}
