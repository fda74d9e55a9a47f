'use strict';
/** run() in a real process: arguments, environment, exit codes, and that it exits. */

const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { describe, test } = require('node:test');

const { EXIT } = require('..');
const {
  startServer, socketAddress, msgs, grpc, refusing, welcomingThenFailing,
} = require('./support/fake-server');

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
    await withServer(refusing({ refusal: { code: 3, reason: 'speak version 1' } },
      grpc.status.FAILED_PRECONDITION, 'unsupported protocol'), async (server) => {
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
    await withServer(welcomingThenFailing(grpc.status.INTERNAL, 'boom'), async (server) => {
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
      // the stack, then the error on the last line: the arena shows a bot's last 3 lines
      assert.match(stderr, /Error: crash requested\n\s+at First\.choose/);
      assert.equal(stderr.trimEnd().split('\n').pop(), 'error: the bot failed: Error: crash requested');
    });
  });

  // the waits below are timed from the bot's hello, not from its start: node's start-up
  // took over the 5 s on a loaded machine (the bot's waits that never ended end at 20 s)
  test('no welcome within the connect timeout: the stream counts as broken, exit 5', async () => {
    let helloAt;
    await withServer(async (s) => {
      await s.recv();
      helloAt = Date.now();
      await s.gone();
    }, async (server) => {
      const { code, stderr } = await runBot(['--referee', server.address, '--token', 't',
        '--connect-timeout', '1', '--reconnect-timeout', '0']);
      assert.equal(code, EXIT.BROKEN, stderr);
      assert.match(stderr, /error: no welcome from the referee within 1 s of the hello/);
      assert.ok(Date.now() - helloAt < 5000);
    });
  });

  test('welcomes each followed at once by a break end within the reconnect window', async () => {
    // every welcome restarted the window: the bot tried forever
    const script = welcomingThenFailing(grpc.status.INTERNAL, 'scripted break');
    let firstAt;
    await withServer(async (s) => {
      firstAt ??= Date.now();   // its first connection
      await script(s);
    }, async (server) => {
      const { code, stderr } = await runBot(['--referee', server.address, '--token', 't',
        '--reconnect-timeout', '1']);
      assert.equal(code, EXIT.BROKEN, stderr.slice(-2000));
      assert.match(stderr, /error: could not reconnect to the referee within 1 s \(last: connection to the referee broke: INTERNAL: scripted break\)/);
      assert.ok(Date.now() - firstAt < 5000);
    });
  });

  test('a break after a late reconnect and a longer session gets a fresh window', async () => {
    // the bot reconnects after 2.2 s of its 3 s window and stays 1.5 s (longer than
    // QUICK_BREAK, 1 s) before the stream breaks again: the break counted against the old
    // window, spent by then, and the bot exited 5 without a single try
    const hellos = [];
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    await withServer(async (s) => {
      hellos.push((await s.recv()).hello);
      const session = hellos.length;
      if (session === 2) await sleep(2200);  // late in the 3 s window
      s.send(msgs.welcome('first', `k${session}`));
      if (session === 3) {
        s.send(msgs.goodbye('scripted'));
        s.end();
        return;
      }
      await sleep(session === 1 ? 200 : 1500);
      s.fail(grpc.status.INTERNAL, `scripted break ${session}`);
    }, async (server) => {
      const started = Date.now();
      const { code, stderr } = await runBot(['--referee', server.address, '--token', 't',
        '--reconnect-timeout', '3']);
      assert.equal(code, EXIT.OK, stderr.slice(-2000));
      assert.equal(stderr.match(/reconnected to the referee after/g).length, 2, stderr);
      assert.match(stderr, /scripted break 2; reconnecting for up to 3 s/);
      assert.ok(Date.now() - started < 10_000);
    });
    assert.deepEqual(hellos.map((h) => h.resumeKey), ['', 'k1', 'k2']);
  });

  test('without its dependencies installed: one line saying to run npm ci, exit 2', async () => {
    // a copy of the SDK with no node_modules next to it (nor above it)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ono99-node-sdk-'));
    try {
      const sdk = path.join(dir, 'sdk');
      for (const part of ['lib', 'index.js', 'testing.js', 'package.json']) {
        fs.cpSync(path.join(__dirname, '..', part), path.join(sdk, part), { recursive: true });
      }
      const bot = path.join(dir, 'bot.js');
      fs.writeFileSync(bot, "require('./sdk');\n");
      const { code, stderr } = await new Promise((resolve) => {
        execFile(process.execPath, [bot], { timeout: 20_000 }, (err, stdout, stderr) => {
          resolve({ code: err ? err.code : 0, stderr });
        });
      });
      assert.equal(code, 2, stderr);
      assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
      assert.match(stderr, /^error: ono99-bot: its dependencies are not installed; run `npm ci` in /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
