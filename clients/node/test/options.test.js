'use strict';
/** parseCommandLine: the TLS settings, from arguments and the environment. */

const assert = require('node:assert/strict');
const { test } = require('node:test');

const { parseCommandLine } = require('../lib/client');

const settings = (argv, env = {}) => {
  const { tls, tlsCa, exit, message } = parseCommandLine(argv, env);
  return exit === undefined ? { tls, tlsCa } : { exit, message };
};

test('by default: plaintext', () => {
  assert.deepEqual(settings([]), { tls: false, tlsCa: undefined });
});

test('TLS: --tls or ONO99_TLS=1 for the system\'s roots, --tls-ca or ONO99_TLS_CA for a file', () => {
  const table = [
    [['--tls'], {}, true, undefined],
    [[], { ONO99_TLS: '1' }, true, undefined],
    [[], { ONO99_TLS: '0' }, false, undefined],
    [[], { ONO99_TLS: '' }, false, undefined],
    [['--tls-ca', 'a.pem'], {}, false, 'a.pem'],
    [['--tls-ca=a.pem'], {}, false, 'a.pem'],
    [[], { ONO99_TLS_CA: 'e.pem' }, false, 'e.pem'],
    [[], { ONO99_TLS_CA: '' }, false, undefined],
    [['--tls-ca', 'a.pem'], { ONO99_TLS_CA: 'e.pem' }, false, 'a.pem'],  // the argument wins
  ];
  for (const [argv, env, tls, tlsCa] of table) {
    assert.deepEqual(settings(argv, env), { tls, tlsCa }, JSON.stringify([argv, env]));
  }
});

test('ONO99_TLS other than 1, 0 or empty is a usage error, not silently plaintext', () => {
  assert.deepEqual(settings([], { ONO99_TLS: 'yes' }),
    { exit: 2, message: 'error: $ONO99_TLS is 1 (speak TLS) or 0, not "yes"\n' });
});

test('--help names the new options and their variables', () => {
  const { exit, message } = parseCommandLine(['--help'], {});
  assert.equal(exit, 0);
  for (const text of ['--tls ', '$ONO99_TLS is 1', '--tls-ca FILE', '$ONO99_TLS_CA']) {
    assert.ok(message.includes(text), `--help lacks ${text}`);
  }
});
