'use strict';
/** The class a Node.js bot extends (a plain object with choose(view) works too). */

const { Random } = require('./random');

class Bot {
  constructor() {
    /** The name sent in the Hello (the referee may show the registered name instead). */
    if (this.name === undefined) this.name = 'bot';
    /** Re-seeded from the referee's bot seed at every match start: draw all randomness
     * from it and a match replays identically from its seed. */
    this.random = new Random(0n);
  }

  /**
   * Return the card to play, a token from view.legal (e.g. "7", "P2"), or a Promise of one.
   * @param {import('./model').View} view
   * @returns {string|Promise<string>}
   */
  // eslint-disable-next-line no-unused-vars
  choose(view) {
    throw new Error(`${this.constructor.name}.choose(view) is not implemented`);
  }

  /** A match begins: `match` has the seat, names, rules and clock. */
  // eslint-disable-next-line no-unused-vars
  onMatchStart(match) {}

  /** A public event of `match` (already appended to match.events). */
  // eslint-disable-next-line no-unused-vars
  onEvent(event, match) {}

  /** A match ended: ranking, verdicts, every hand revealed. `match` is null for a match
   * this bot was never told of. */
  // eslint-disable-next-line no-unused-vars
  onMatchEnd(result, match) {}

  /**
   * The referee refused the card just sent (`reason` says why); the turn is still open.
   * Return another card, or null to send nothing. By default: a legal card not tried yet.
   * @param {import('./model').View} view
   * @param {string} reason
   * @param {Set<string>} tried the cards already sent for this turn
   */
  onRejected(view, reason, tried) {
    return defaultOnRejected(view, reason, tried);
  }
}

function defaultOnRejected(view, reason, tried) {
  for (const card of view.legal) if (!tried.has(card)) return card;
  return null;
}

module.exports = { Bot, defaultOnRejected };
