'use strict';
/** parseCommandLine: the TLS and reconnection settings, from arguments and the environment. */

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { parseCommandLine } = require('../lib/client');

const settings = (argv, env = {}) => {
  const { tls, tlsCa, reconnectTimeout, exit, message } = parseCommandLine(argv, env);
  return exit === undefined ? { tls, tlsCa, reconnectTimeout } : { exit, message };
};

test('by default: plaintext, reconnecting for 10 s', () => {
  assert.deepEqual(settings([]), { tls: false, tlsCa: undefined, reconnectTimeout: 10 });
});

test('TLS: --tls or ONO99_TLS=1 for the system\'s roots, --tls-ca or ONO99_TLS_CA for a file', () => {
  const table = [
    [['--tls'], {}, true, undefined],
    [[], { ONO99_TLS: '1' }, true, undefined],
    [[], { ONO99_TLS: 'yes' }, true, undefined],  // as the Python SDK: anything but 0 or empty
    [[], { ONO99_TLS: '0' }, false, undefined],
    [[], { ONO99_TLS: '' }, false, undefined],
    [['--tls-ca', 'a.pem'], {}, false, 'a.pem'],
    [['--tls-ca=a.pem'], {}, false, 'a.pem'],
    [[], { ONO99_TLS_CA: 'e.pem' }, false, 'e.pem'],
    [[], { ONO99_TLS_CA: '' }, false, undefined],
    [['--tls-ca', 'a.pem'], { ONO99_TLS_CA: 'e.pem' }, false, 'a.pem'],  // the argument wins
  ];
  for (const [argv, env, tls, tlsCa] of table) {
    assert.deepEqual(settings(argv, env), { tls, tlsCa, reconnectTimeout: 10 }, JSON.stringify([argv, env]));
  }
});

test('reconnect timeout: --reconnect-timeout, else ONO99_RECONNECT_TIMEOUT, else 10; 0 turns it off', () => {
  const table = [
    [['--reconnect-timeout', '2.5'], {}, 2.5],
    [['--reconnect-timeout=0'], {}, 0],
    [[], { ONO99_RECONNECT_TIMEOUT: '30' }, 30],
    [[], { ONO99_RECONNECT_TIMEOUT: '0' }, 0],
    [[], { ONO99_RECONNECT_TIMEOUT: '' }, 10],
    [['--reconnect-timeout', '1'], { ONO99_RECONNECT_TIMEOUT: '30' }, 1],
  ];
  for (const [argv, env, seconds] of table) {
    assert.equal(settings(argv, env).reconnectTimeout, seconds, JSON.stringify([argv, env]));
  }
});

test('a reconnect timeout that is not a number of seconds is a usage error naming its source', () => {
  for (const [argv, env, message] of [
    [['--reconnect-timeout', 'soon'], {}, 'error: --reconnect-timeout takes a number of seconds, not "soon"\n'],
    [['--reconnect-timeout=-1'], {}, 'error: --reconnect-timeout takes a number of seconds, not "-1"\n'],
    [[], { ONO99_RECONNECT_TIMEOUT: ' ' }, 'error: $ONO99_RECONNECT_TIMEOUT takes a number of seconds, not " "\n'],
    [[], { ONO99_RECONNECT_TIMEOUT: 'Infinity' }, 'error: $ONO99_RECONNECT_TIMEOUT takes a number of seconds, not "Infinity"\n'],
  ]) {
    assert.deepEqual(settings(argv, env), { exit: 2, message });
  }
});

test('--help names the new options and their variables', () => {
  const { exit, message } = parseCommandLine(['--help'], {});
  assert.equal(exit, 0);
  for (const text of ['--tls ', '$ONO99_TLS is 1', '--tls-ca FILE', '$ONO99_TLS_CA', '--reconnect-timeout SECONDS',
    '$ONO99_RECONNECT_TIMEOUT']) {
    assert.ok(message.includes(text), `--help lacks ${text}`);
  }
});
