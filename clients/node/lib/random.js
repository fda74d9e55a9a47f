'use strict';
/**
 * A small seeded random generator (xoshiro128**, seeded through splitmix64), because
 * Math.random cannot be seeded and a bot's match must replay exactly from its seed.
 * It does not produce the same numbers as Python's random.Random for the same seed.
 */

const MASK64 = (1n << 64n) - 1n;

function splitmix64(state) {
  state = (state + 0x9e3779b97f4a7c15n) & MASK64;
  let z = state;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return [state, z ^ (z >> 31n)];
}

class Random {
  /** @param {bigint|number|string} [seed] any integer; taken modulo 2^64 */
  constructor(seed = 0n) {
    this.seed(seed);
  }

  /** Restart the sequence from `seed`. */
  seed(seed) {
    let state = BigInt.asUintN(64, BigInt(seed));
    const words = new Uint32Array(4);
    for (let i = 0; i < 2; i++) {
      let out;
      [state, out] = splitmix64(state);
      words[2 * i] = Number(out & 0xffffffffn);
      words[2 * i + 1] = Number(out >> 32n);
    }
    if (!(words[0] | words[1] | words[2] | words[3])) words[0] = 1;  // never all zero
    this._s = words;
  }

  /** The next 32 random bits, as an unsigned integer. */
  nextUint32() {
    const s = this._s;
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** A float in [0, 1) with 53 random bits, like Python's random.random(). */
  random() {
    const hi = this.nextUint32() >>> 5;  // 27 bits
    const lo = this.nextUint32() >>> 6;  // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** An integer in [0, stop). */
  randrange(stop) {
    if (!(Number.isInteger(stop) && stop > 0)) throw new RangeError(`randrange(${stop}): need a positive integer`);
    return Math.floor(this.random() * stop);
  }

  /** A random element of a non-empty array. */
  choice(items) {
    if (!items.length) throw new RangeError('choice() of an empty array');
    return items[this.randrange(items.length)];
  }

  /** Shuffle `items` in place (Fisher-Yates) and return it. */
  shuffle(items) {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.randrange(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}

function rotl(x, k) {
  return (x << k) | (x >>> (32 - k));
}

module.exports = { Random };
