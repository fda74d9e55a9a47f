'use strict';
/**
 * A real grpc-js server playing a scripted referee, for the client's tests.
 *
 *     const server = await startServer(async (s) => {
 *       const hello = await s.recv();
 *       s.send({ welcome: { protocolVersion: 1, botName: 'x', sessionId: 's1' } });
 *       s.send({ goodbye: { reason: 'done' } });
 *       s.end();
 *     });
 *     ... play(bot, { referee: server.address, ... })
 *     await server.close();
 *
 * Each Play stream runs the script with a session: recv() resolves to the next message
 * the bot sent (null once it half-closed or went away; it rejects after a timeout so a
 * test never hangs), send() writes a RefereeMessage, end() closes with status OK,
 * fail(code, details) closes with an error status. A script's exception is kept in
 * server.errors. With {tls: true} the server speaks TLS with the certificate TLS_CERT, made
 * for localhost and 127.0.0.1 (self-signed, valid until 2126) by
 *   openssl req -x509 -newkey rsa:2048 -nodes -keyout localhost.key -out localhost.pem \
 *     -days 36500 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { loadProtocol } = require('../../lib/proto');

const { grpc, service } = loadProtocol();

const TLS_CERT = path.join(__dirname, '..', 'fixtures', 'tls', 'localhost.pem');
const TLS_KEY = path.join(__dirname, '..', 'fixtures', 'tls', 'localhost.key');

class Session {
  constructor(call) {
    this.call = call;
    this.received = [];   // every message read so far
    this._queue = [];
    this._waiters = [];
    this.closed = false;
    call.on('data', (msg) => this._push(msg));
    call.on('end', () => this._close());
    call.on('error', () => this._close());
    call.on('cancelled', () => this._close());
  }

  _push(msg) {
    this.received.push(msg);
    const waiter = this._waiters.shift();
    if (waiter) waiter.resolve(msg);
    else this._queue.push(msg);
  }

  _close() {
    this.closed = true;
    for (const w of this._waiters.splice(0)) w.resolve(null);
  }

  /** The next message from the bot; null once the stream is over. */
  recv(timeoutMs = 10_000) {
    if (this._queue.length) return Promise.resolve(this._queue.shift());
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (msg) => { clearTimeout(timer); resolve(msg); },
      };
      const timer = setTimeout(() => {
        this._waiters.splice(this._waiters.indexOf(waiter), 1);
        reject(new Error(`the bot sent nothing within ${timeoutMs} ms`));
      }, timeoutMs);
      this._waiters.push(waiter);
    });
  }

  /** The next message, which must be an action; returns it. */
  async action(timeoutMs) {
    const msg = await this.recv(timeoutMs);
    if (!msg || msg.kind !== 'action') throw new Error(`expected an action, got ${JSON.stringify(msg)}`);
    return msg.action;
  }

  send(msg) {
    this.call.write(msg);
  }

  end() {
    this.call.end();
  }

  fail(code, details) {
    this.call.emit('error', { code, details });
  }

  /** Resolves once the bot's side of the stream is over (half-close or cancel). */
  async gone(timeoutMs = 10_000) {
    const start = Date.now();
    while (!this.closed) {
      if (Date.now() - start > timeoutMs) throw new Error('the bot kept its stream open');
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/** Folders of socketAddress() not yet removed: removed when the test process exits. */
const folders = new Set();
process.on('exit', () => {
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh unix socket address in a temporary folder (removed by close(), or as the test
 * process exits: a test given only the address, for a referee nobody starts, left one in
 * the temporary folder each run).
 */
function socketAddress() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ono99-node-'));
  folders.add(dir);
  return { dir, address: `unix:${path.join(dir, 'referee.sock')}` };
}

/**
 * Serve `script` on `address` (default: a fresh unix socket), over TLS if `tls`.
 * @returns {Promise<{address: string, sessions: Session[], errors: Error[], done: Promise[],
 *                    close: () => Promise<void>, kill: () => void}>}
 */
async function startServer(script, { address, tls = false } = {}) {
  let dir = null;
  if (!address) ({ dir, address } = socketAddress());
  const server = new grpc.Server();
  const sessions = [];
  const errors = [];
  const done = [];
  server.addService(service, {
    Play(call) {
      const s = new Session(call);
      sessions.push(s);
      done.push(Promise.resolve().then(() => script(s)).catch((err) => {
        errors.push(err);
        try { s.fail(grpc.status.INTERNAL, `script failed: ${err.message}`); } catch { /* over */ }
      }));
    },
  });
  const credentials = tls
    ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: fs.readFileSync(TLS_CERT), private_key: fs.readFileSync(TLS_KEY) }])
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (err, p) => (err ? reject(err) : resolve(p)));
  });
  const bound = address.startsWith('unix:') ? address : address.replace(/:0$/, `:${port}`);
  return {
    address: bound,
    sessions,
    errors,
    done,
    async close() {
      await Promise.allSettled(done);
      await new Promise((resolve) => server.tryShutdown(() => resolve()));
      server.forceShutdown();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
    /** Stop at once, cutting every stream (a referee that dies). */
    kill() {
      server.forceShutdown();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Stderr stand-in collecting what is written. */
function capture() {
  const chunks = [];
  return { write: (text) => { chunks.push(String(text)); return true; }, get text() { return chunks.join(''); } };
}

/** Messages of a simple match, for scripts. */
const msgs = {
  welcome: (botName = 'bot', resumeKey = '') => ({
    welcome: { protocolVersion: 1, referee: 'fake/0', botName, sessionId: 's-1', resumeKey },
  }),
  goodbye: (reason = 'done') => ({ goodbye: { reason } }),
  matchStart: (matchId, { seat = 0, seats = 2, ruleset = 'modern', botSeed = '7' } = {}) => ({
    matchStart: {
      matchId, seat, seatNames: Array.from({ length: seats }, (_, i) => `seat${i}`),
      rules: { ruleset, options: { max_total: '98' }, seats, limit: ruleset === 'modern' ? 98 : 99 },
      timeControl: { moveMs: 1000, bankMs: 10000 }, botSeed,
    },
  }),
  turn: (matchId, turnId, { hand = [7, 8, 13], legal = hand, total = 0, seat = 0, seats = 2, events = [] } = {}) => ({
    turn: {
      matchId, turnId: String(turnId), legal, events, moveMs: 1000, bankMs: 10000,
      view: {
        seat, hand, total, direction: 1, toAct: seat, owed: 1, drawSize: 50, round: 1, dealer: seats - 1,
        seats: Array.from({ length: seats }, () => ({ handSize: 4, inGame: true, inRound: true })),
      },
    },
  }),
  matchEnd: (matchId, ranking = [[0], [1]], events = []) => ({
    matchEnd: { matchId, ranking: ranking.map((seats) => ({ seats })), termination: 'last_standing', events },
  }),
  play: (seat, card, total) => ({ cardPlayed: { seat, card, total } }),
};

/** A session script: refuses the hello with `refusal`, then ends the stream with `status`. */
function refusing(refusal, status, details) {
  return async (s) => {
    await s.recv();
    s.send(refusal);
    s.fail(status, details);
  };
}

/** A session script: welcomes the bot, then ends the stream at once with `status`. */
function welcomingThenFailing(status, details) {
  return async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.fail(status, details);
  };
}

module.exports = {
  startServer, socketAddress, capture, msgs, grpc, refusing, welcomingThenFailing, TLS_CERT, TLS_KEY,
};
