'use strict';
/** require('ono99-bot/testing'): the fake referee for unit tests (lib/testing.js). */
module.exports = require('./lib/testing');
