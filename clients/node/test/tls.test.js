'use strict';
/** TLS to the referee: a grpc-js server with a self-signed certificate for localhost. */

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { Bot, play, run, EXIT } = require('..');
const {
  startServer, capture, msgs, TLS_CERT, TLS_KEY,
} = require('./support/fake-server');

class First extends Bot {
  name = 'first';

  choose(view) { return view.legal[0]; }
}

/** A script that says goodbye at once; the hello it got is in `hellos`. */
function goodbye(hellos) {
  return async (s) => {
    hellos.push((await s.recv()).hello);
    s.send(msgs.goodbye());
    s.end();
  };
}

async function withTlsServer(script, fn) {
  const server = await startServer(script, { address: '127.0.0.1:0', tls: true });
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

test('--tls-ca: TLS trusting that certificate, by IP address and by name', async () => {
  const hellos = [];
  await withTlsServer(goodbye(hellos), async (server) => {
    const port = server.address.split(':')[1];
    for (const referee of [server.address, `localhost:${port}`]) {
      const stderr = capture();
      const code = await run(new First(), ['--referee', referee, '--token', 'secret', '--tls-ca', TLS_CERT], {}, { stderr });
      assert.equal(code, EXIT.OK, stderr.text);
    }
  });
  assert.deepEqual(hellos.map((h) => h.token), ['secret', 'secret']);
});

test('$ONO99_TLS_CA does the same', async () => {
  const hellos = [];
  await withTlsServer(goodbye(hellos), async (server) => {
    const env = { ONO99_REFEREE: server.address, ONO99_TOKEN: 't', ONO99_TLS_CA: TLS_CERT };
    const stderr = capture();
    assert.equal(await run(new First(), [], env, { stderr }), EXIT.OK, stderr.text);
  });
  assert.equal(hellos.length, 1);
});

test('plaintext to a TLS referee: exit 4 at the connect timeout, naming the TLS options', async () => {
  await withTlsServer(goodbye([]), async (server) => {
    const stderr = capture();
    const code = await play(new First(), { referee: server.address, token: 't', connectTimeout: 0.5, stderr });
    assert.equal(code, EXIT.UNREACHABLE);
    assert.match(stderr.text, /^error: no referee reachable at 127\.0\.0\.1:\d+ within 0.5 s \(a referee that speaks TLS needs --tls-ca FILE or --tls\)\n$/);
  });
});

test('--tls trusts only the system\'s roots: a self-signed referee is not reached', async () => {
  await withTlsServer(goodbye([]), async (server) => {
    const stderr = capture();
    const code = await play(new First(), { referee: server.address, token: 't', tls: true, connectTimeout: 0.5, stderr });
    assert.equal(code, EXIT.UNREACHABLE);
    assert.match(stderr.text, /within 0.5 s over TLS \(is its certificate the one trusted\? --tls-ca FILE names it\)\n$/);
  });
});

test('a certificate file that cannot be read, or holds no certificate, is a usage error (2)', async () => {
  for (const [file, why] of [
    ['/nonexistent/ca.pem', /^error: cannot read the TLS certificate \/nonexistent\/ca.pem: ENOENT/],
    [TLS_KEY, /^error: .*localhost.key holds no PEM certificate/],
  ]) {
    const stderr = capture();
    const code = await run(new First(), ['--referee', '127.0.0.1:1', '--token', 't', '--tls-ca', file], {}, { stderr });
    assert.equal(code, EXIT.USAGE);
    assert.match(stderr.text, why);
  }
});

test('a unix socket stays plaintext whatever the TLS settings', async () => {
  const hellos = [];
  const server = await startServer(goodbye(hellos));
  assert.match(server.address, /^unix:/);
  try {
    const env = { ONO99_TLS: '1', ONO99_TLS_CA: '/nonexistent/ca.pem' };
    const stderr = capture();
    assert.equal(await run(new First(), ['--referee', server.address, '--token', 't'], env, { stderr }), EXIT.OK, stderr.text);
  } finally {
    await server.close();
  }
  assert.equal(hellos.length, 1);
});
