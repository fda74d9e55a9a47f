'use strict';
/** Unit tests of the node-counter bot with the SDK's fake referee: node --test bot.test.js */

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { FakeReferee } = require('../../clients/node/testing');
const { CounterBot, noneDrawn, unseenCards } = require('./bot');

test('owing two, it deflects: R or P2 (modern), R or H (classic)', async () => {
  const modern = await FakeReferee.start(new CounterBot(), { seats: 3 });
  modern.event('play', { seat: 2, card: 'P2', total: 40 });
  assert.equal(await modern.turn({ hand: ['5', 'P2', '9', '3'], total: 40, owed: 2 }), 'P2');
  const classic = await FakeReferee.start(new CounterBot(), { ruleset: 'classic' });
  assert.equal(await classic.turn({ hand: ['5', 'H', '9', 'DP'], legal: ['5', 'H', '9'], total: 40, owed: 2 }), 'H');
});

test('it plays the card most likely to leave the next seat stuck', async () => {
  // 88 + 10 = 98: only 0, -10, R, P2 are playable after it; after 1 nearly anything is
  const ref = await FakeReferee.start(new CounterBot());
  assert.equal(await ref.turn({ hand: ['1', '10'], total: 88 }), '10');
  // with nothing to gain, the total is kept low: 0 rather than 5 at the start
  assert.equal(await ref.turn({ hand: ['0', '5'], total: 0 }), '0');
});

test('every answer is legal, on every ruleset', async () => {
  const decks = {
    modern: ['0', '1', '2', '5', '9', '10', '99', 'R', '-10', 'P2'],
    classic: ['2', '5', '9', '10', 'H', 'R', '-10', 'DP', '99'],
    'classic-set99': ['2', '5', '9', '10', 'H', 'R', '-10', 'DP', '99'],
  };
  for (const [ruleset, cards] of Object.entries(decks)) {
    const ref = await FakeReferee.start(new CounterBot(), { ruleset, seats: 4, botSeed: 9 });
    let k = 0;
    for (let i = 0; i < 200; i++) {
      const hand = [0, 1, 2, 3].map(() => cards[(k = (k * 7 + 3) % 101) % cards.length]);
      const legal = [...new Set(hand)].slice(0, 1 + (i % 4));
      const card = await ref.turn({ hand, legal, total: (i * 13) % 99, owed: 1 + (i % 2), direction: i % 3 ? 1 : -1 });
      assert.ok(legal.includes(card), `${card} not in ${legal}`);
    }
  }
});

test('with epsilon 1 it plays random legal cards, the same for the same seed', async () => {
  const picks = [];
  for (const seed of [5, 5]) {
    const ref = await FakeReferee.start(new CounterBot(1), { botSeed: seed });
    const got = [];
    for (let i = 0; i < 20; i++) got.push(await ref.turn({ hand: ['1', '2', '3', '4'] }));
    picks.push(got);
  }
  assert.deepEqual(picks[0], picks[1]);
  assert.ok(new Set(picks[0]).size > 1);
});

test('unseen cards: the deck minus the hand, the pile since the last reshuffle, revealed hands', async () => {
  let unseen;
  class Peek extends CounterBot {
    choose(view) {
      unseen = unseenCards(view, { 1: 6, 7: 6, 99: 10, R: 10 });
      return super.choose(view);
    }
  }
  const ref = await FakeReferee.start(new Peek(), { seats: 3 });
  ref.event('play', { seat: 1, card: '1', total: 1 });
  ref.event('reshuffle', { drawSize: 40 });
  ref.event('play', { seat: 1, card: '7', total: 8 });
  ref.event('four99', { seat: 2, total: 8 });
  ref.event('eliminate', { seat: 2, hand: ['R', 'R'] });
  await ref.turn({ hand: ['1', 'R'], handSizes: [4, 4, 0], inGame: [true, true, false], revealed: [[], [], ['R', 'R']] });
  assert.deepEqual(Object.fromEntries(unseen), { 1: 5, 7: 5, 99: 6, R: 7 });
});

test('noneDrawn is the hypergeometric chance of drawing no safe card', () => {
  assert.equal(noneDrawn(10, 0, 4), 1);
  assert.equal(noneDrawn(10, 7, 4), 0);
  assert.ok(Math.abs(noneDrawn(10, 2, 2) - (8 * 7) / (10 * 9)) < 1e-12);
});
