'use strict';
/** The gRPC client (play/run) against a real grpc-js server playing a scripted referee. */

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { Bot, play, run, EXIT, SDK } = require('..');
const {
  startServer, socketAddress, capture, msgs, grpc, refusing, welcomingThenFailing,
} = require('./support/fake-server');

class Lowest extends Bot {
  name = 'lowest';

  constructor() {
    super();
    this.views = [];
    this.events = [];
    this.starts = [];
    this.ends = [];
  }

  choose(view) {
    this.views.push({ turnId: view.turnId, legal: view.legal, matchId: view.match.matchId });
    return view.legal[0];
  }

  onMatchStart(match) { this.starts.push(match); }

  onEvent(event, match) { this.events.push([match.matchId, event]); }

  onMatchEnd(result, match) { this.ends.push([result, match]); }
}

// 2^63 - 1, 2^64 - 1 and 2^53 + 1 (the first integer a double cannot hold)
const BIG_IDS = ['9223372036854775807', '18446744073709551615', '9007199254740993'];

async function withServer(script, fn, options) {
  const server = await startServer(script, options);
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

test('the hello carries name, token, protocol version 1 and the SDK', async () => {
  let hello;
  await withServer(async (s) => {
    hello = (await s.recv()).hello;
    s.send(msgs.welcome());
    s.send(msgs.goodbye());
    s.end();
  }, async (server) => {
    const { result } = playOn(server, new Lowest());
    assert.equal(await result, EXIT.OK);
  });
  assert.deepEqual(hello, { name: 'lowest', token: 'tok', protocolVersion: 1, sdk: SDK, resumeKey: '' });
  assert.match(SDK, /^ono99-node\/\d+\.\d+\.\d+$/);
});

test('a name given to play() replaces the bot\'s own in the hello', async () => {
  let hello;
  await withServer(async (s) => {
    hello = (await s.recv()).hello;
    s.send(msgs.goodbye());
    s.end();
  }, async (server) => {
    assert.equal(await playOn(server, new Lowest(), { name: 'seat-name' }).result, EXIT.OK);
  });
  assert.equal(hello.name, 'seat-name');
});

test('a refusal exits 3 and prints its code and reason', async () => {
  await withServer(refusing({ refusal: { code: 1, reason: 'unknown token "tok"' } },
    grpc.status.UNAUTHENTICATED, 'unknown token'), async (server) => {
    const { result, stderr } = playOn(server, new Lowest());
    assert.equal(await result, EXIT.REFUSED);
    assert.match(stderr.text, /error: referee refused the connection \(bad_token\): unknown token "tok"/);
  });
});

test('turns are answered with their exact 64-bit turn ids; events reach the bot', async () => {
  const actions = [];
  const bot = new Lowest();
  await withServer(async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.send(msgs.matchStart('m1', { botSeed: '18446744073709551615' }));
    s.send({ events: { matchId: 'm1', events: [{ roundStarted: { round: 1, dealer: 1, first: 0, total: 0 } }] } });
    for (const [i, id] of BIG_IDS.entries()) {
      s.send(msgs.turn('m1', id, { hand: [8 + i, 16], events: [msgs.play(1, 7 + i, 10 * i)] }));
      actions.push(await s.action());
    }
    s.send(msgs.matchEnd('m1', [[1], [0]], [{ seatLost: { seat: 0 } }]));
    s.send(msgs.goodbye());
    s.end();
  }, async (server) => {
    assert.equal(await playOn(server, bot).result, EXIT.OK);
  });
  assert.deepEqual(actions.map((a) => a.turnId), BIG_IDS);
  assert.deepEqual(actions.map((a) => a.card), [8, 9, 10]);
  assert.deepEqual(bot.views.map((v) => v.turnId), BIG_IDS.map(BigInt));
  assert.equal(bot.starts[0].botSeed, 18446744073709551615n);
  assert.deepEqual(bot.events.map(([, e]) => e.kind), ['deal', 'play', 'play', 'play', 'lose']);
  assert.deepEqual(bot.events[2][1], { kind: 'play', seat: 1, card: '2', total: 10 });
  const [result, match] = bot.ends[0];
  assert.deepEqual(result.ranking, [[1], [0]]);
  assert.equal(result.placeOf(0), 2);
  assert.deepEqual(match.played(), ['1', '2', '3']);  // enum 7, 8, 9
});

test('a rejected action is retried with another legal card, on the same turn id', async () => {
  const actions = [];
  await withServer(async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.send(msgs.matchStart('m1'));
    s.send(msgs.turn('m1', BIG_IDS[0], { hand: [7, 8, 9], legal: [7, 8] }));
    actions.push(await s.action());
    s.send({ rejected: { turnId: BIG_IDS[0], code: 3, reason: 'no' } });
    actions.push(await s.action());
    s.send({ rejected: { turnId: BIG_IDS[0], code: 3, reason: 'no again' } });
    // every legal card was tried: the default onRejected sends nothing more
    s.send(msgs.matchEnd('m1'));
    s.send(msgs.goodbye());
    s.end();
  }, async (server) => {
    const { result, stderr } = playOn(server, new Lowest());
    assert.equal(await result, EXIT.OK);
    assert.match(stderr.text, /action rejected \(illegal_play\): no again/);
  });
  assert.deepEqual(actions, [{ turnId: BIG_IDS[0], card: 7 }, { turnId: BIG_IDS[0], card: 8 }]);
});

test('one connection plays many matches; turn ids need not be sequential', async () => {
  const bot = new Lowest();
  const ids = [];
  await withServer(async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    for (let m = 0; m < 5; m++) {
      s.send(msgs.matchStart(`m${m}`, { botSeed: String(m) }));
      for (let t = 0; t < 3; t++) {
        // random 63-bit ids, as a referee may send
        const id = (BigInt(Math.floor(Math.random() * 2 ** 31)) << 32n) | BigInt(Math.floor(Math.random() * 2 ** 32));
        s.send(msgs.turn(`m${m}`, id));
        const action = await s.action();
        assert.equal(action.turnId, String(id));
        ids.push(action.turnId);
      }
      s.send(msgs.matchEnd(`m${m}`));
    }
    s.send(msgs.goodbye());
    s.end();
  }, async (server) => {
    assert.equal(await playOn(server, bot).result, EXIT.OK);
  });
  assert.equal(ids.length, 15);
  assert.equal(bot.starts.length, 5);
  assert.deepEqual(bot.ends.map(([r]) => r.matchId), ['m0', 'm1', 'm2', 'm3', 'm4']);
  assert.deepEqual(bot.views.map((v) => v.matchId), ids.map((_, i) => `m${Math.floor(i / 3)}`));
});

test('after goodbye the bot closes its stream and play() resolves 0', async () => {
  await withServer(async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.send(msgs.goodbye('the tournament is over'));
    await s.gone();  // the bot leaves without waiting for the referee to end the stream
  }, async (server) => {
    assert.equal(await playOn(server, new Lowest()).result, EXIT.OK);
  });
});

test('a stream that ends without a goodbye exits 5 (reconnection off)', async () => {
  await withServer(async (s) => {
    await s.recv();
    s.send(msgs.welcome());
    s.end();
  }, async (server) => {
    const { result, stderr } = playOn(server, new Lowest(), { reconnectTimeout: 0 });
    assert.equal(await result, EXIT.BROKEN);
    assert.match(stderr.text, /closed the stream without a goodbye/);
  });
});

test('a stream that breaks with an error status exits 5 and names the status (reconnection off)', async () => {
  await withServer(welcomingThenFailing(grpc.status.UNAVAILABLE, 'the referee is stopping'), async (server) => {
    const { result, stderr } = playOn(server, new Lowest(), { reconnectTimeout: 0 });
    assert.equal(await result, EXIT.BROKEN);
    assert.match(stderr.text, /connection to the referee broke: UNAVAILABLE: the referee is stopping/);
  });
});

test('no referee within the connect timeout exits 4', async () => {
  const { address } = socketAddress();  // a socket nobody listens on
  const stderr = capture();
  const start = Date.now();
  const code = await play(new Lowest(), { referee: address, token: 't', connectTimeout: 0.5, stderr });
  assert.equal(code, EXIT.UNREACHABLE);
  assert.ok(Date.now() - start < 5000, 'gave up late');  // 0.5 s, with room for a loaded machine
  assert.match(stderr.text, /no referee reachable at unix:.* within 0.5 s/);
});

test('a referee that starts late is found (the connection is retried)', async () => {
  const { address } = socketAddress();
  const stderr = capture();
  const playing = play(new Lowest(), { referee: address, token: 't', connectTimeout: 10, stderr });
  await new Promise((r) => setTimeout(r, 800));
  await withServer(async (s) => {
    await s.recv();
    s.send(msgs.goodbye());
    s.end();
  }, async () => {
    assert.equal(await playing, EXIT.OK, stderr.text);
  }, { address });
});

test('tcp addresses work as well as unix sockets', async () => {
  await withServer(async (s) => {
    await s.recv();
    s.send(msgs.goodbye());
    s.end();
  }, async (server) => {
    assert.match(server.address, /^127\.0\.0\.1:\d+$/);
    assert.equal(await playOn(server, new Lowest()).result, EXIT.OK);
  }, { address: '127.0.0.1:0' });
});

test('an exception in choose ends play() with that error and closes the stream', async () => {
  class Broken extends Bot {
    choose() { throw new Error('bug in choose'); }
  }
  let session;
  await withServer(async (s) => {
    session = s;
    await s.recv();
    s.send(msgs.matchStart('m1'));
    s.send(msgs.turn('m1', 5));
    await s.gone();
  }, async (server) => {
    await assert.rejects(playOn(server, new Broken()).result, /bug in choose/);
  });
  assert.ok(session.closed);
});

test('run() reports an exception of the bot on stderr and resolves 1', async () => {
  class Broken extends Bot {
    onMatchStart() { throw new TypeError('bug in a hook'); }
    choose(view) { return view.legal[0]; }
  }
  await withServer(async (s) => {
    await s.recv();
    s.send(msgs.matchStart('m1'));
    await s.gone();
  }, async (server) => {
    const stderr = capture();
    const code = await run(new Broken(), ['--referee', server.address, '--token', 't'], {}, { stderr });
    assert.equal(code, EXIT.BOT_ERROR);
    assert.match(stderr.text, /TypeError: bug in a hook\n\s+at /);
    assert.equal(stderr.text.trimEnd().split('\n').pop(), 'error: the bot failed: TypeError: bug in a hook');
  });
});

test('run() takes the address, token and name from the environment', async () => {
  let hello;
  await withServer(async (s) => {
    hello = (await s.recv()).hello;
    s.send(msgs.goodbye());
    s.end();
  }, async (server) => {
    const env = { ONO99_REFEREE: server.address, ONO99_TOKEN: 'env-token', ONO99_BOT_NAME: 'env-name' };
    assert.equal(await run(new Lowest(), [], env, { stderr: capture() }), EXIT.OK);
  });
  assert.equal(hello.token, 'env-token');
  assert.equal(hello.name, 'env-name');
});

test('run() without an address or a token is a usage error (2)', async () => {
  for (const argv of [[], ['--referee', 'unix:/nowhere'], ['--token', 't']]) {
    const stderr = capture();
    assert.equal(await run(new Lowest(), argv, {}, { stderr }), EXIT.USAGE);
    assert.match(stderr.text, /give the referee address and token \(--referee\/--token or \$ONO99_REFEREE\/\$ONO99_TOKEN\)/);
  }
  for (const argv of [['--bogus'], ['--connect-timeout', 'soon'], ['--connect-timeout', '-1']]) {
    const stderr = capture();
    assert.equal(await run(new Lowest(), argv, { ONO99_REFEREE: 'localhost:1', ONO99_TOKEN: 't' }, { stderr }), EXIT.USAGE);
    assert.match(stderr.text, /error: /);
  }
});

test('an address no referee can have is a usage error (2) at once', async () => {
  // gRPC took each and said only, at the end of the connect timeout (30 s), that no referee
  // was reachable
  for (const [address, said] of [
    ['localhost', 'no port: gRPC would dial 443'], ['http://localhost:50051', 'not a URL'],
    ['::1:50051', 'IPv6 address in brackets'], ['localhost:99999', 'not HOST:PORT'],
    ['unix:', 'unix:/PATH'], ['unix://relative.sock', 'unix:/PATH'],
    ['localhost:https', 'not HOST:PORT'],
    ['unix-abstract:ono99', 'grpc-js cannot dial an abstract unix socket'],
  ]) {
    const stderr = capture();
    const started = Date.now();
    assert.equal(await run(new Lowest(), ['--token', 't'], { ONO99_REFEREE: address }, { stderr }), EXIT.USAGE);
    assert.ok(Date.now() - started < 5000);
    assert.ok(stderr.text.includes(`the referee address ${JSON.stringify(address)} (--referee or $ONO99_REFEREE): `), stderr.text);
    assert.ok(stderr.text.includes(said), stderr.text);
  }
  for (const [address, tls] of [['[::1]:1', []], ['dns:///localhost:1', []], ['ipv4:127.0.0.1:1', []],
    ['unix:///nowhere/at-all.sock', []], ['127.0.0.1:01', []],
    ['localhost', ['--tls']], ['[::1]', ['--tls']],                // port 443, TLS's
    ['127.0.0.1:1\n', []], [' 127.0.0.1:1\r', []]]) {             // blanks around are not its
    const stderr = capture();
    const code = await run(new Lowest(), ['--referee', address, '--token', 't', ...tls, '--connect-timeout', '0.2'], {}, { stderr });
    assert.equal(code, EXIT.UNREACHABLE, stderr.text);
    assert.ok(stderr.text.includes(`no referee reachable at ${address.trim()} within`), stderr.text);
  }
});

test('--connect-timeout bounds the wait for a referee', async () => {
  const { address } = socketAddress();
  const stderr = capture();
  const code = await run(new Lowest(), ['--referee', address, '--token', 't', '--connect-timeout', '0.2'], {}, { stderr });
  assert.equal(code, EXIT.UNREACHABLE);
  assert.match(stderr.text, /within 0.2 s/);
});

test('-v logs every message, but never the token or the resume key', async () => {
  await withServer(async (s) => {
    await s.recv();
    s.send(msgs.welcome('lowest', 'the-resume-key'));
    s.send(msgs.goodbye());
    s.end();
  }, async (server) => {
    const stderr = capture();
    const argv = ['-v', '--referee', server.address, '--token', 'the-secret-token'];
    assert.equal(await run(new Lowest(), argv, {}, { stderr }), EXIT.OK);
    assert.match(stderr.text, /lowest DEBUG send \{"hello":\{"name":"lowest","token":"<hidden>"/);
    assert.match(stderr.text, /lowest DEBUG received \{"welcome":\{.*"resumeKey":"<hidden>"/);
    assert.doesNotMatch(stderr.text, /the-secret-token|the-resume-key/);
  });
});

test('an address grpc cannot parse is a usage error (2), not a crash', async () => {
  const stderr = capture();
  assert.equal(await play(new Lowest(), { referee: '', token: 't', stderr }), EXIT.USAGE);
  assert.match(stderr.text, /error: bad referee address "": Could not parse target name ""/);
});
