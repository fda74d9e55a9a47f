'use strict';
/**
 * Reconnection: a stream that breaks (after the welcome or before it), or a refusal as one
 * of too many, is dialled again with the same token (and, once trying again, so is a token
 * in use or a referee shutting down), against a real grpc-js server whose script branches
 * on the session's number.
 */

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { Bot, play, EXIT } = require('..');
const {
  startServer, socketAddress, capture, msgs, grpc, refusing, welcomingThenFailing,
} = require('./support/fake-server');

class Recorder extends Bot {
  name = 'recorder';
  starts = [];
  seen = [];

  choose(view) { return view.legal[0]; }

  onMatchStart(match) { this.starts.push(match.matchId); }

  onEvent(event) { this.seen.push(event.card); }
}

const TOKEN_IN_USE = { refusal: { code: 2, reason: 'token of bot "recorder" is already in use' } };

/** Serve `scripts[i]` to the i-th Play stream (the last one to any later stream). */
async function withSessions(scripts, fn, options) {
  let n = 0;
  const server = await startServer((s) => scripts[Math.min(n++, scripts.length - 1)](s), options);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

function playOn(server, bot, extra = {}) {
  const stderr = capture();
  const result = play(bot, { referee: server.address, token: 'tok', connectTimeout: 5, stderr, ...extra });
  return { result, stderr };
}

/** A session that welcomes the bot and says goodbye at once. */
async function welcomeAndGoodbye(s) {
  await s.recv();
  s.send(msgs.welcome());
  s.send(msgs.goodbye());
  s.end();
}

const refuseInUse = refusing(TOKEN_IN_USE, grpc.status.ALREADY_EXISTS, 'token in use');

test('a stream that breaks mid-match is dialled again: same token, the match goes on', async () => {
  const bot = new Recorder();
  const hellos = [];
  const actions = [];
  await withSessions([
    async (s) => {
      hellos.push((await s.recv()).hello);
      s.send(msgs.welcome('recorder', 'key-1'));
      s.send(msgs.matchStart('m1'));
      s.send(msgs.turn('m1', 5, { events: [msgs.play(1, 7, 1), msgs.play(1, 8, 3)] }));
      actions.push(await s.action());
      s.fail(grpc.status.UNAVAILABLE, 'connection reset');
    },
    async (s) => {  // the referee has not noticed yet that the first stream is gone
      hellos.push((await s.recv()).hello);
      s.send(TOKEN_IN_USE);
      s.fail(grpc.status.ALREADY_EXISTS, 'token in use');
    },
    async (s) => {
      hellos.push((await s.recv()).hello);
      s.send(msgs.welcome('recorder', 'key-2'));
      s.send(msgs.matchStart('m1'));  // the same match, and every event from its start
      s.send(msgs.turn('m1', 5, { events: [7, 8, 9].map((c) => msgs.play(1, c, 0)) }));
      actions.push(await s.action());
      s.send(msgs.matchEnd('m1'));
      s.send(msgs.goodbye());
      s.end();
    },
  ], async (server) => {
    const { result, stderr } = playOn(server, bot);
    assert.equal(await result, EXIT.OK, stderr.text);
    assert.match(stderr.text, /warning: connection to the referee broke: UNAVAILABLE: connection reset; reconnecting for up to 10 s\n/);
    assert.match(stderr.text, /\nreconnected to the referee after \d+\.\d s\n/);
    assert.equal(server.sessions.length, 3);
  });
  // every try after the drop carries the key the broken session was welcomed with
  assert.deepEqual(hellos.map((h) => [h.token, h.name, h.resumeKey]),
    [['tok', 'recorder', ''], ['tok', 'recorder', 'key-1'], ['tok', 'recorder', 'key-1']]);
  assert.deepEqual(actions, [{ turnId: '5', card: 7 }, { turnId: '5', card: 7 }]);
  assert.deepEqual(bot.starts, ['m1']);
  assert.deepEqual(bot.seen, ['1', '2', '3']);
});

test('a referee that dies and comes back on its address is found again', async () => {
  const { address } = socketAddress();
  const bot = new Recorder();
  const stderr = capture();
  const first = await startServer(async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.send(msgs.matchStart('m1'));
  }, { address });
  const playing = play(bot, { referee: address, token: 'tok', stderr });
  // welcomed, and in its match: only then has it a session to get back
  while (!bot.starts.length) await new Promise((r) => setTimeout(r, 20));
  first.kill();
  await new Promise((r) => setTimeout(r, 700));  // the bot retries meanwhile
  await withSessions([async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.send(msgs.matchStart('m1'));
    s.send(msgs.goodbye());
    s.end();
  }], async () => {
    assert.equal(await playing, EXIT.OK, stderr.text);
  }, { address });
  assert.match(stderr.text, /warning: connection to the referee broke: .*; reconnecting for up to 10 s\n/);
  assert.match(stderr.text, /reconnected to the referee after \d+\.\d s\n$/);
  assert.deepEqual(bot.starts, ['m1']);
});

test('past the reconnect timeout: exit 5, saying so and why', async () => {
  await withSessions([async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.end();  // no goodbye
  }, refuseInUse], async (server) => {
    const start = Date.now();
    const { result, stderr } = playOn(server, new Recorder(), { reconnectTimeout: 0.7 });
    assert.equal(await result, EXIT.BROKEN);
    const took = Date.now() - start;
    assert.ok(took >= 700 && took < 5000, `gave up after ${took} ms`);
    assert.match(stderr.text, /warning: the referee closed the stream without a goodbye; reconnecting for up to 0.7 s\n/);
    assert.match(stderr.text, /error: could not reconnect to the referee within 0.7 s \(last: referee refused the connection \(token_in_use\): .*\)\n$/);
    // 0.2 s, 0.4 s, then the end of the window: a few tries, not a busy loop
    assert.ok(server.sessions.length >= 2 && server.sessions.length <= 4, `${server.sessions.length} sessions`);
  });
});

test('a referee gone for good: exit 5 once the window is over, naming it unreachable', async () => {
  const server = await startServer(async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.send(msgs.matchStart('m1'));
  });
  const stderr = capture();
  const bot = new Recorder();
  const playing = play(bot, { referee: server.address, token: 'tok', reconnectTimeout: 0.6, stderr });
  // welcomed, and in its match: only then has it a session to get back
  while (!bot.starts.length) await new Promise((r) => setTimeout(r, 20));
  server.kill();
  assert.equal(await playing, EXIT.BROKEN);
  assert.match(stderr.text, /error: could not reconnect to the referee within 0.6 s \(last: no referee reachable at unix:.*\)\n$/);
});

test('any other refusal while reconnecting ends it: exit 3', async () => {
  await withSessions([welcomingThenFailing(grpc.status.UNAVAILABLE, 'gone'),
    refusing({ refusal: { code: 1, reason: 'unknown token' } }, grpc.status.UNAUTHENTICATED,
      'unknown token')], async (server) => {
    const { result, stderr } = playOn(server, new Recorder());
    assert.equal(await result, EXIT.REFUSED);
    assert.match(stderr.text, /error: referee refused the connection \(bad_token\): unknown token\n$/);
    assert.equal(server.sessions.length, 2);
  });
});

test('any other refusal at the first connection is never retried, even of a token in use', async () => {
  await withSessions([refuseInUse, async (s) => {
    await s.recv();
    s.send(msgs.goodbye());
    s.end();
  }], async (server) => {
    const { result, stderr } = playOn(server, new Recorder());
    assert.equal(await result, EXIT.REFUSED);
    assert.match(stderr.text, /\(token_in_use\)/);
    assert.equal(server.sessions.length, 1);
  });
});

test('while reconnecting, a stream that breaks before its welcome is tried again', async () => {
  await withSessions([async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.end();
  }, async (s) => {
    await s.recv();
    s.fail(grpc.status.INTERNAL, 'hiccup');
  }, welcomeAndGoodbye], async (server) => {
    const { result, stderr } = playOn(server, new Recorder());
    assert.equal(await result, EXIT.OK, stderr.text);
    assert.equal(server.sessions.length, 3);
  });
});

test('at the first connection, a stream that breaks before the welcome is tried again', async () => {
  // no refusal was said: the hello may never have arrived, or the referee restarted
  await withSessions([async (s) => {
    await s.recv();
    s.fail(grpc.status.UNAVAILABLE, 'not now');
  }, async (s) => {
    assert.equal((await s.recv()).hello.resumeKey, '');  // no session to take the place of
    s.send(msgs.welcome());
    s.send(msgs.goodbye());
    s.end();
  }], async (server) => {
    const { result, stderr } = playOn(server, new Recorder());
    assert.equal(await result, EXIT.OK, stderr.text);
    assert.match(stderr.text, /^warning: connection to the referee broke: UNAVAILABLE: not now; trying again for up to 10 s\n/);
    assert.match(stderr.text, /\nconnected to the referee after \d+\.\d s\n/);
    assert.equal(server.sessions.length, 2);
  });
});

test('with no reconnect window, a stream that breaks before the welcome exits 5 at once', async () => {
  await withSessions([async (s) => {
    await s.recv();
    s.fail(grpc.status.UNAVAILABLE, 'not now');
  }], async (server) => {
    const { result, stderr } = playOn(server, new Recorder(), { reconnectTimeout: 0 });
    assert.equal(await result, EXIT.BROKEN);
    assert.match(stderr.text, /^error: connection to the referee broke: UNAVAILABLE: not now\n$/);
    assert.equal(server.sessions.length, 1);
  });
});

const TOO_MANY = { refusal: { code: 6, reason: 'too many connections waiting to say hello' } };

const refuseTooMany = refusing(TOO_MANY, grpc.status.RESOURCE_EXHAUSTED, 'too many');

test('a refusal as one of too many is waited out, even at the first connection', async () => {
  await withSessions([refuseTooMany, refuseTooMany, welcomeAndGoodbye], async (server) => {
    const { result, stderr } = playOn(server, new Recorder());
    assert.equal(await result, EXIT.OK, stderr.text);
    assert.match(stderr.text, /^warning: referee refused the connection \(too_many\): too many connections waiting to say hello; trying again for up to 10 s\n/);
    assert.match(stderr.text, /\nconnected to the referee after \d+\.\d s\n$/);
    assert.equal(server.sessions.length, 3);
  });
});

test('refused as one of too many past the window: exit 3, saying so', async () => {
  await withSessions([refuseTooMany], async (server) => {
    const start = Date.now();
    const { result, stderr } = playOn(server, new Recorder(), { reconnectTimeout: 0.7 });
    assert.equal(await result, EXIT.REFUSED);
    const took = Date.now() - start;
    assert.ok(took >= 700 && took < 5000, `gave up after ${took} ms`);
    assert.match(stderr.text, /error: could not connect to the referee within 0.7 s \(last: referee refused the connection \(too_many\): .*\)\n$/);
    assert.ok(server.sessions.length >= 2 && server.sessions.length <= 4, `${server.sessions.length} sessions`);
  });
});

test('with no reconnect window, a refusal as one of too many exits 3 at once', async () => {
  await withSessions([refuseTooMany], async (server) => {
    const { result, stderr } = playOn(server, new Recorder(), { reconnectTimeout: 0 });
    assert.equal(await result, EXIT.REFUSED);
    assert.match(stderr.text, /^error: referee refused the connection \(too_many\): too many connections waiting to say hello\n$/);
    assert.equal(server.sessions.length, 1);
  });
});

const SHUTTING_DOWN = { refusal: { code: 5, reason: 'the referee is shutting down' } };

const refuseShuttingDown = refusing(SHUTTING_DOWN, grpc.status.UNAVAILABLE, 'shutting down');

test('while reconnecting, a referee shutting down is waited out (it may be back soon)', async () => {
  // as `arena serve` restarting: the stream ends with no goodbye, the stopping referee
  // refuses the hellos that follow, then the restarted one takes the bot back
  const hellos = [];
  const refuse = async (s) => {
    hellos.push((await s.recv()).hello);
    s.send(SHUTTING_DOWN);
    s.fail(grpc.status.UNAVAILABLE, 'shutting down');
  };
  await withSessions([async (s) => {
    hellos.push((await s.recv()).hello);
    s.send(msgs.welcome('recorder', 'key-1'));
    s.end();  // no goodbye
  }, refuse, refuse, async (s) => {
    hellos.push((await s.recv()).hello);
    s.send(msgs.welcome('recorder', 'key-2'));
    s.send(msgs.goodbye());
    s.end();
  }], async (server) => {
    const { result, stderr } = playOn(server, new Recorder());
    assert.equal(await result, EXIT.OK, stderr.text);
    assert.match(stderr.text, /^warning: the referee closed the stream without a goodbye; reconnecting for up to 10 s\n/);
    assert.match(stderr.text, /\nreconnected to the referee after \d+\.\d s\n$/);
    assert.doesNotMatch(stderr.text, /error:/);
    assert.equal(server.sessions.length, 4);
  });
  assert.deepEqual(hellos.map((h) => h.resumeKey), ['', 'key-1', 'key-1', 'key-1']);
});

test('trying again after a first stream broke before its welcome, shutting down is waited out too', async () => {
  await withSessions([async (s) => {
    await s.recv();
    s.fail(grpc.status.UNAVAILABLE, 'not now');
  }, refuseShuttingDown, welcomeAndGoodbye], async (server) => {
    const { result, stderr } = playOn(server, new Recorder());
    assert.equal(await result, EXIT.OK, stderr.text);
    assert.match(stderr.text, /^warning: connection to the referee broke: UNAVAILABLE: not now; trying again for up to 10 s\n/);
    assert.equal(server.sessions.length, 3);
  });
});

test('a referee still shutting down past the reconnect window: exit 5, naming the refusal', async () => {
  await withSessions([async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.end();  // no goodbye
  }, refuseShuttingDown], async (server) => {
    // a window of 3 s: at least two tries after the first refusal (pauses of 0.2 and
    // 0.4 s) fit it on a loaded machine too, where 0.7 s held only one (CI, 2 sessions)
    const { result, stderr } = playOn(server, new Recorder(), { reconnectTimeout: 3 });
    assert.equal(await result, EXIT.BROKEN);
    assert.match(stderr.text, /error: could not reconnect to the referee within 3 s \(last: referee refused the connection \(shutting_down\): the referee is shutting down\)\n$/);
    // the first session, then tries 0.16-0.24, 0.48-0.72, 1.1-1.7 and 2.4-3 s in at most
    assert.ok(server.sessions.length >= 3 && server.sessions.length <= 7, `${server.sessions.length} sessions`);
  });
});

test('at the first connection, a referee shutting down is final: exit 3 (as in Python)', async () => {
  await withSessions([refuseShuttingDown, async (s) => {
    await s.recv();
    s.send(msgs.goodbye());
    s.end();
  }], async (server) => {
    const { result, stderr } = playOn(server, new Recorder());
    assert.equal(await result, EXIT.REFUSED);
    assert.match(stderr.text, /^error: referee refused the connection \(shutting_down\): the referee is shutting down\n$/);
    assert.equal(server.sessions.length, 1);
  });
});
