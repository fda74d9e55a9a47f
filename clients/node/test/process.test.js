'use strict';
/** run() in a real process: arguments, environment, exit codes, and that it exits. */

const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const path = require('node:path');
const { describe, test } = require('node:test');

const { EXIT } = require('..');
const { startServer, socketAddress, msgs, grpc } = require('./support/fake-server');

const BOT = path.join(__dirname, 'fixtures', 'bot.js');

/** Run the fixture bot; resolves to {code, stdout, stderr}. Killed (and failed) after 20 s. */
function runBot(args = [], env = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ONO99_')));
  return new Promise((resolve) => {
    execFile(process.execPath, [BOT, ...args], { env: { ...clean, ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.killed ? `killed (${err.signal})` : err.code) : 0, stdout, stderr });
    });
  });
}

async function withServer(script, fn) {
  const server = await startServer(script);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

// Each test waits on a child process (most of it node's start-up): run a few side by side,
// not all at once, which on a loaded machine would make each start slow enough to time out.
describe('the bot process', { concurrency: 4 }, () => {
  test('no address or no token: usage error 2', async () => {
    const { code, stderr } = await runBot();
    assert.equal(code, EXIT.USAGE);
    assert.match(stderr, /error: give the referee address and token/);
  });

  test('--help prints the options and exits 0', async () => {
    const { code, stdout } = await runBot(['--help']);
    assert.equal(code, 0);
    assert.match(stdout, /--referee ADDR.*\n[\s\S]*--connect-timeout SECONDS/);
  });

  test('a whole session from the environment: answers, goodbye, exit 0, nothing left running', async () => {
    let hello;
    let action;
    await withServer(async (s) => {
      hello = (await s.recv()).hello;
      s.send(msgs.welcome('named'));
      s.send(msgs.matchStart('m1'));
      s.send(msgs.turn('m1', '18446744073709551615', { hand: [9, 12] }));
      action = await s.action();
      s.send(msgs.matchEnd('m1'));
      s.send(msgs.goodbye());
      s.end();
    }, async (server) => {
      const { code, stderr } = await runBot([], {
        ONO99_REFEREE: server.address, ONO99_TOKEN: 'secret', ONO99_BOT_NAME: 'named',
      });
      assert.equal(code, EXIT.OK, stderr);
      assert.equal(stderr, '');
    });
    assert.equal(hello.name, 'named');
    assert.equal(hello.token, 'secret');
    assert.deepEqual(action, { turnId: '18446744073709551615', card: 9 });
  });

  test('arguments win over the environment', async () => {
    let hello;
    await withServer(async (s) => {
      hello = (await s.recv()).hello;
      s.send(msgs.goodbye());
      s.end();
    }, async (server) => {
      const { code } = await runBot(['--referee', server.address, '--token', 'arg', '--name', 'argname'], {
        ONO99_REFEREE: 'unix:/nowhere', ONO99_TOKEN: 'env', ONO99_BOT_NAME: 'envname',
      });
      assert.equal(code, EXIT.OK);
    });
    assert.equal(hello.token, 'arg');
    assert.equal(hello.name, 'argname');
  });

  test('refused: exit 3', async () => {
    await withServer(async (s) => {
      await s.recv();
      s.send({ refusal: { code: 3, reason: 'speak version 1' } });
      s.fail(grpc.status.FAILED_PRECONDITION, 'unsupported protocol');
    }, async (server) => {
      const { code, stderr } = await runBot(['--referee', server.address, '--token', 't']);
      assert.equal(code, EXIT.REFUSED);
      assert.match(stderr, /refused the connection \(unsupported_protocol\): speak version 1/);
    });
  });

  test('unreachable: exit 4 after the connect timeout', async () => {
    const { address } = socketAddress();
    const { code, stderr } = await runBot(['--referee', address, '--token', 't', '--connect-timeout', '0.3']);
    assert.equal(code, EXIT.UNREACHABLE);
    assert.match(stderr, /no referee reachable/);
  });

  test('the stream breaks, reconnection off: exit 5', async () => {
    await withServer(async (s) => {
      await s.recv();
      s.send(msgs.welcome());
      s.fail(grpc.status.INTERNAL, 'boom');
    }, async (server) => {
      const { code, stderr } = await runBot(['--referee', server.address, '--token', 't'],
        { ONO99_RECONNECT_TIMEOUT: '0' });
      assert.equal(code, EXIT.BROKEN);
      assert.match(stderr, /connection to the referee broke: INTERNAL: boom/);
    });
  });

  test('an exception in choose: the stack on stderr, exit 1, the stream closed (no hang)', async () => {
    await withServer(async (s) => {
      await s.recv();
      s.send(msgs.matchStart('m1'));
      s.send(msgs.turn('m1', 1));
      await s.gone();
    }, async (server) => {
      const { code, stderr } = await runBot(['--referee', server.address, '--token', 't', '--crash']);
      assert.equal(code, EXIT.BOT_ERROR);
      assert.match(stderr, /error: the bot failed: Error: crash requested\n\s+at First\.choose/);
    });
  });
});
