'use strict';
/**
 * The Driver against a hostile or broken referee: it must not exhaust the bot's memory,
 * spoof the terminal through what the SDK prints, or crash a bot written to docs/bots.md.
 */

const assert = require('node:assert/strict');
const { test } = require('node:test');

const {
  Driver, MAX_MATCH_EVENTS, MAX_OPEN_MATCHES, RefereeError, RefusedError, printable,
} = require('../lib/driver');

const PLAY = { kind: 'cardPlayed', cardPlayed: { seat: 1, card: 7, total: 50 } };

/** A Driver whose choose records its calls, and every line it logs (level, text). */
function recorded(bot = {}) {
  const lines = [];
  const chosen = [];
  const log = {
    debugging: false,
    debug: (text) => lines.push(['debug', text]),
    warn: (text) => lines.push(['warn', text]),
    error: (text) => lines.push(['error', text]),
  };
  const driver = new Driver({ choose: (view) => { chosen.push(view); return view.legal[0]; }, ...bot },
    { log });
  return { driver, lines, chosen };
}

function start(matchId) {
  return { kind: 'matchStart', matchStart: { matchId, seat: 0, seatNames: ['me', 'other'], botSeed: '1' } };
}

function turn(turnId, { matchId = 'm1', legal = [13], seat = 0, seats = 2, events = [] } = {}) {
  return {
    kind: 'turn',
    turn: {
      matchId, turnId, legal, events,
      view: { seat, hand: [13], seats: Array.from({ length: seats }, () => ({ inRound: true })) },
    },
  };
}

function events(matchId, count) {
  return { kind: 'events', events: { matchId, events: Array(count).fill(PLAY) } };
}

test('a match past 100000 events breaks the session, none of the message kept', async () => {
  const { driver } = recorded();
  await driver.handle(start('m1'));
  for (const count of [40000, 40000, 20000]) await driver.handle(events('m1', count));
  assert.equal(driver.matches.get('m1')._raw.length, MAX_MATCH_EVENTS);
  await assert.rejects(driver.handle(events('m1', 1)), (err) => {
    assert.ok(err instanceof RefereeError);
    assert.equal(err.message, 'the referee sent more than 100000 events for match m1');
    return true;
  });
  assert.equal(driver.matches.get('m1')._raw.length, MAX_MATCH_EVENTS);
});

test('150000 events in one message (events or turn) are refused, not a RangeError', async () => {
  const { driver, chosen } = recorded();
  await driver.handle(start('m1'));
  await assert.rejects(driver.handle(events('m1', 150000)), RefereeError);
  // a turn of a match never announced keeps its events too: the same bound
  await assert.rejects(driver.handle(turn('1', { matchId: 'x', events: Array(150000).fill(PLAY) })),
    /more than 100000 events for match x/);
  assert.equal(chosen.length, 0);
});

test('the 65th open match forgets the one heard of least recently', async () => {
  const { driver } = recorded();
  for (let i = 0; i < MAX_OPEN_MATCHES; i++) await driver.handle(start(`m${i}`));
  await driver.handle(events('m0', 1));  // m0 heard of again: m1 is now the oldest
  await driver.handle(start('late'));
  assert.equal(driver.matches.size, MAX_OPEN_MATCHES);
  assert.ok(driver.matches.has('m0') && driver.matches.has('late'));
  assert.ok(!driver.matches.has('m1'));
  // a later message for m1 is one for a match never started: its events are dropped
  await driver.handle(events('m1', 5));
  assert.ok(!driver.matches.has('m1'));
  for (let i = 0; i < 1000; i++) await driver.handle(start(`more${i}`));
  assert.equal(driver.matches.size, MAX_OPEN_MATCHES);
});

test('a rejection with no turn open, or of another turn, prints nothing', async () => {
  const { driver, lines } = recorded();
  await driver.handle(start('m1'));
  const reject = (turnId) => driver.handle({ kind: 'rejected', rejected: { turnId, code: 3, reason: 'x'.repeat(1 << 20) } });
  assert.deepEqual(await reject('1'), []);
  await driver.handle(turn('2'));
  assert.deepEqual(await reject('1'), []);
  assert.deepEqual(lines.filter(([level]) => level !== 'debug'), []);
  await reject('2');  // the open turn's: printed, cut
  assert.deepEqual(lines.filter(([level]) => level !== 'debug'),
    [['warn', `action rejected (illegal_play): ${'x'.repeat(300)}... (${(1 << 20) - 300} more characters)`]]);
});

test('an empty legal list, or a seat outside the seats, is not answered: one warning', async () => {
  const { driver, lines, chosen } = recorded();
  await driver.handle(start('m1'));
  assert.deepEqual(await driver.handle(turn('7', { legal: [] })), []);
  assert.deepEqual(await driver.handle(turn('8', { seat: 2 })), []);
  assert.deepEqual(await driver.handle(turn('9', { seat: -1 })), []);
  // no turn open: a rejection of the unanswered turn is not answered either
  assert.deepEqual(await driver.handle({ kind: 'rejected', rejected: { turnId: '9', code: 3, reason: '' } }), []);
  assert.equal(chosen.length, 0);
  assert.deepEqual(lines, [
    ['warn', "the referee's turn 7 of match m1 offers no legal card; not answered"],
    ['warn', "the referee's turn 8 of match m1 puts the bot at seat 2 of 2; not answered"],
    ['warn', "the referee's turn 9 of match m1 puts the bot at seat -1 of 2; not answered"],
  ]);
  assert.deepEqual(await driver.handle(turn('10')), [{ action: { turnId: '10', card: 13 } }]);
});

test('printable escapes controls, DEL, C1 and format characters, and cuts after 300', () => {
  assert.equal(printable('\x1b]0;PWNED\x07\x1b[31mRED\r\n\tok\x7f\x9b\u202eé'),
    '\\x1b]0;PWNED\\x07\\x1b[31mRED\\x0d\\x0a\\x09ok\\x7f\\x9b\\u202eé');
  assert.equal(printable('a'.repeat(300)), 'a'.repeat(300));
  assert.equal(printable('a'.repeat(301)), `${'a'.repeat(300)}... (1 more characters)`);
  // characters, not UTF-16 units
  assert.equal(printable('😀'.repeat(302)), `${'😀'.repeat(300)}... (2 more characters)`);
  assert.equal(printable('\x1b'.repeat(301)), `${'\\x1b'.repeat(300)}... (1 more characters)`);
});

test('a refusal\'s reason and a match id are printed escaped', async () => {
  const { driver, lines } = recorded();
  await assert.rejects(driver.handle({ kind: 'refusal', refusal: { code: 1, reason: 'no\x1b[2K\rFAKE' } }),
    (err) => err instanceof RefusedError
      && err.message === 'referee refused the connection (bad_token): no\\x1b[2K\\x0dFAKE');
  await driver.handle(turn('1', { matchId: 'm\x1b[31m', legal: [] }));
  assert.deepEqual(lines, [['warn', "the referee's turn 1 of match m\\x1b[31m offers no legal card; not answered"]]);
});
