'use strict';
/**
 * The Node.js SDK for ONO 99 Arena bots.
 *
 *     const { Bot, run } = require('ono99-bot');   // or a relative path to clients/node
 *
 *     class Lowest extends Bot {
 *       name = 'lowest';
 *       choose(view) { return view.legal[0]; }
 *     }
 *
 *     if (require.main === module) run(new Lowest()).then((code) => process.exit(code));
 *
 * run() reads the referee address and token from --referee/--token or the environment
 * (ONO99_REFEREE/ONO99_TOKEN), retries the connection for a while, and plays until the
 * referee says goodbye. require('ono99-bot/testing') has a fake referee for unit tests.
 */

const { Bot } = require('./lib/bot');
const { run, play, EXIT, SDK } = require('./lib/client');
const { Driver, RefusedError } = require('./lib/driver');
const {
  TOKENS, CARD_VALUES, tokenOf, Match, MatchResult, Rules, SeatInfo, View,
} = require('./lib/model');
const { Random } = require('./lib/random');

module.exports = {
  Bot, run, play, EXIT, SDK, Driver, RefusedError,
  TOKENS, CARD_VALUES, tokenOf, Match, MatchResult, Rules, SeatInfo, View, Random,
};
