'use strict';
/** Connect a bot to a referee over gRPC and play until the referee says goodbye. */

const fs = require('node:fs');
const net = require('node:net');
const { parseArgs } = require('node:util');

const {
  Driver, RefereeError, RefusedError, printable,
} = require('./driver');
const { loadProtocol } = require('./proto');
const { version } = require('../package.json');

const SDK = `ono99-node/${version}`;
const ENV_REFEREE = 'ONO99_REFEREE';
const ENV_TOKEN = 'ONO99_TOKEN';
const ENV_NAME = 'ONO99_BOT_NAME';
const ENV_TLS = 'ONO99_TLS';
const ENV_TLS_CA = 'ONO99_TLS_CA';
const ENV_RECONNECT_TIMEOUT = 'ONO99_RECONNECT_TIMEOUT';

/** Exit codes of run() (the Python SDK's, plus 1 for a bot whose own code threw). */
const EXIT = Object.freeze({
  OK: 0,           // the referee said goodbye
  BOT_ERROR: 1,    // the bot's choose or a hook threw (Python: the uncaught exception's 1)
  USAGE: 2,        // no referee address or no token, or a bad argument
  REFUSED: 3,      // the referee refused the hello (as too many: for the whole reconnect timeout)
  UNREACHABLE: 4,  // no referee reachable within the connect timeout
  BROKEN: 5,       // the connection broke, or the stream ended without a goodbye
});

const DEFAULT_CONNECT_TIMEOUT = 30;
// The referee keeps a dropped bot's seat for a grace window (10 s by default): try as long.
const DEFAULT_RECONNECT_TIMEOUT = 10;
// Seconds between attempts to reconnect: the first soon (a referee that has not yet noticed
// the old stream died refuses the token as in use for a moment), then doubling, capped so
// that a referee back late in the window is found quickly; each pause drawn within 20% of
// that (as gRPC's own connection backoff), so that bots turned away together do not come
// back together.
const RECONNECT_BACKOFF = Object.freeze({ first: 0.2, max: 2, jitter: 0.2 });
// The shortest wait for a welcome (s): a try at the end of a reconnect window has little
// time left, and the referee's answer (a refusal the bot reports as the last failure) must
// not be cut off by a wait of a few milliseconds.
const MIN_WELCOME_WAIT = 1;
// A session that breaks sooner than this (s) after its welcome counts against the running
// reconnect window: a referee that welcomes the bot and fails at once is not tried forever.
// A session that lasted longer gets a fresh window, as a first break does: a bot that came
// back late in its window and broke again seconds later had no time left, and gave up
// without a single try though its seat was still kept. As the Python SDK's QUICK_BREAK.
const QUICK_BREAK = 1;
// Refusals a bot waits out once it is trying again (besides too_many, waited out even at
// the first connection): the referee has not yet noticed the old stream is gone, or it is
// stopping and may be back in a moment (`arena serve` restarting). As the Python SDK's
// _TRANSIENT; any other refusal is final.
const TRANSIENT_WHILE_RECONNECTING = new Set(['token_in_use', 'shutting_down']);

// A referee started after its bot (or restarting) is found within a second: grpc's
// default backoff grows to minutes between attempts, longer than any connect timeout.
// A connection whose packets stop arriving (a NAT that forgot it, a route that died) gives
// no error: without pings the bot waited for its next message forever. grpc pings the
// referee every 10 s and drops the connection if no answer comes within 10 s; the bot then
// reconnects. The referee accepts a ping every 5 s (arena/referee/server.py
// MIN_PING_INTERVAL_MS), so a bot waiting minutes between matches is not cut for pinging.
const CHANNEL_OPTIONS = Object.freeze({
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.keepalive_time_ms': 10000,
  'grpc.keepalive_timeout_ms': 10000,
});

const USAGE = `usage: node bot.js [--referee ADDR] [--token TOKEN] [--name NAME]
                   [--tls | --tls-ca FILE] [--connect-timeout SECONDS]
                   [--reconnect-timeout SECONDS] [-v]

An ONO 99 bot: connects to a referee and plays until told to stop.

options:
  --referee ADDR               referee address, e.g. localhost:50051 or unix:/path
                               (default: $${ENV_REFEREE})
  --token TOKEN                the secret token this bot was given (default: $${ENV_TOKEN})
  --name NAME                  name to announce (default: $${ENV_NAME} or the bot's own)
  --tls                        speak TLS, trusting the system's certificates
                               (default: on if $${ENV_TLS} is 1)
  --tls-ca FILE                speak TLS, trusting the PEM certificate(s) in FILE, e.g. a
                               self-signed referee's (default: $${ENV_TLS_CA}); a unix:
                               address is always plaintext
  --connect-timeout SECONDS    seconds to keep retrying the connection, then to wait for
                               the referee's welcome (default: ${DEFAULT_CONNECT_TIMEOUT})
  --reconnect-timeout SECONDS  seconds to try to reconnect when the connection drops or
                               the referee refuses the bot as one of too many
                               (default: $${ENV_RECONNECT_TIMEOUT} or ${DEFAULT_RECONNECT_TIMEOUT}; 0: never)
  -v, --verbose                log every message
  -h, --help                   show this help
`;

/** A logger writing to `stream`, every line stamped with the time and the bot's name. */
function makeLog(stream, label, verbose) {
  const write = (level, text) => stream.write(`${new Date().toISOString()} ${label} ${level} ${text}\n`);
  return {
    debugging: verbose,  // callers test it before building a costly message
    debug: verbose ? (text) => write('DEBUG', text) : () => {},
    warn: (text) => write('WARNING', text),
    error: (text) => write('ERROR', text),
  };
}

/**
 * The settings run() takes from `argv` and `env`, or {exit, message} when it must stop.
 * @returns {{referee?: string, token?: string, name?: string, tls: boolean, tlsCa?: string,
 *            connectTimeout: number, reconnectTimeout: number, verbose: boolean}
 *           | {exit: number, message: string}}
 */
function parseCommandLine(argv, env) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        referee: { type: 'string' },
        token: { type: 'string' },
        name: { type: 'string' },
        tls: { type: 'boolean' },
        'tls-ca': { type: 'string' },
        'connect-timeout': { type: 'string' },
        'reconnect-timeout': { type: 'string' },
        verbose: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return { exit: EXIT.USAGE, message: `${USAGE}error: ${err.message}\n` };
  }
  if (values.help) return { exit: EXIT.OK, message: USAGE };
  const usage = (text) => ({ exit: EXIT.USAGE, message: `error: ${text}\n` });
  const connectTimeout = seconds(values['connect-timeout'] ?? String(DEFAULT_CONNECT_TIMEOUT));
  if (connectTimeout === null) {
    return usage(`--connect-timeout takes a number of seconds, not ${JSON.stringify(values['connect-timeout'])}`);
  }
  const reconnectText = values['reconnect-timeout'] ?? (env[ENV_RECONNECT_TIMEOUT] || undefined);
  const reconnectTimeout = seconds(reconnectText ?? String(DEFAULT_RECONNECT_TIMEOUT));
  if (reconnectTimeout === null) {
    const where = values['reconnect-timeout'] !== undefined ? '--reconnect-timeout' : `$${ENV_RECONNECT_TIMEOUT}`;
    return usage(`${where} takes a number of seconds, not ${JSON.stringify(reconnectText)}`);
  }
  return {
    // blanks around it are not the address's (a secret mounted from a file ends with a
    // newline, which grpc-js would refuse)
    referee: (values.referee ?? env[ENV_REFEREE])?.trim(),
    token: values.token ?? env[ENV_TOKEN],
    name: values.name ?? env[ENV_NAME],
    tls: Boolean(values.tls) || !['', '0', undefined].includes(env[ENV_TLS]),
    tlsCa: values['tls-ca'] ?? (env[ENV_TLS_CA] || undefined),
    connectTimeout,
    reconnectTimeout,
    verbose: Boolean(values.verbose),
  };
}

/**
 * Why `address` cannot name a referee, or null if it may: HOST:PORT, unix:PATH, a form
 * gRPC resolves itself (dns:, ipv4:, ipv6:), or with `tls` a HOST alone (port 443 to gRPC:
 * a referee behind an HTTPS proxy). gRPC takes any string and fails only at the connect
 * timeout: a plaintext `localhost` or `http://host:port` was 30 s of silence, then "no
 * referee reachable". grpc-js has no abstract unix sockets (`unix-abstract:NAME`, which
 * the Python and C++ SDKs dial), and named ports (`:https`) are not a referee's.
 */
function addressProblem(address, tls = false) {
  const colon = address.indexOf(':');
  const scheme = colon < 0 ? '' : address.slice(0, colon);
  const rest = address.slice(colon + 1);
  if (scheme === 'unix-abstract') {
    return 'grpc-js cannot dial an abstract unix socket: serve the referee on unix:/PATH';
  }
  if (scheme === 'unix') {
    const authority = rest.startsWith('//') && !rest.startsWith('///');
    return rest.replace(/^\/+/, '') === '' || authority ? 'a unix socket is unix:/PATH' : null;
  }
  if (['dns', 'ipv4', 'ipv6'].includes(scheme)) return null;
  if (address.includes('://')) return 'not a URL: HOST:PORT, e.g. localhost:50051';
  const last = address.lastIndexOf(':');
  const host = last < 0 ? '' : address.slice(0, last);
  const port = address.slice(last + 1);
  if (net.isIPv6(host) || net.isIPv6(address)) {
    return 'write an IPv6 address in brackets, with a port: [::1]:50051';
  }
  if (last < 0 || (address.startsWith('[') && address.endsWith(']'))) {   // a host alone
    if (tls && address !== '' && !/[\s/]/.test(address)) return null;
    return "no port: gRPC would dial 443, TLS's port; write HOST:PORT (e.g. localhost:50051), " +
      'or give --tls for a referee that speaks TLS on 443';
  }
  const bracketed = host.startsWith('[') && host.endsWith(']');
  if (!host || (host.includes(':') && !bracketed) || !/^[0-9]+$/.test(port)
      || !(Number(port) > 0 && Number(port) < 65536)) {
    return 'not HOST:PORT (e.g. localhost:50051) or unix:/PATH';
  }
  return null;
}

/** `text` as a number of seconds (finite, not negative), or null. */
function seconds(text) {
  const value = Number(text);
  return text.trim() !== '' && Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * Play `bot` against the referee named on the command line or in the environment.
 * Resolves to an exit code (EXIT); never rejects: an exception of the bot's own code is
 * printed on stderr and gives EXIT.BOT_ERROR.
 *
 *     run(new MyBot()).then((code) => process.exit(code));
 *
 * @param {object|Function} bot a Bot, an object with choose(view), or a choose function
 * @param {string[]} [argv] the arguments (default: process.argv.slice(2))
 * @param {NodeJS.ProcessEnv} [env] the environment (default: process.env)
 * @param {{stderr?: {write: Function}, protoDir?: string}} [options]
 */
async function run(bot, argv = process.argv.slice(2), env = process.env, options = {}) {
  const stderr = options.stderr || process.stderr;
  const args = parseCommandLine(argv, env);
  if (args.exit !== undefined) {
    (args.exit === EXIT.OK ? process.stdout : stderr).write(args.message);
    return args.exit;
  }
  if (!args.referee || args.token === undefined) {
    stderr.write(`error: give the referee address and token (--referee/--token or ` +
      `$${ENV_REFEREE}/$${ENV_TOKEN})\n`);
    return EXIT.USAGE;
  }
  const problem = addressProblem(args.referee, args.tls || Boolean(args.tlsCa));
  if (problem !== null) {
    stderr.write(`error: the referee address ${JSON.stringify(args.referee)} (--referee or ` +
      `$${ENV_REFEREE}): ${problem}\n`);
    return EXIT.USAGE;
  }
  try {
    return await play(bot, { ...args, stderr, protoDir: options.protoDir });
  } catch (err) {
    // the stack, then what failed on one line, last: the arena's verdict on a bot shows
    // the last 3 lines of its stderr, which were stack frames
    if (err && err.stack) stderr.write(`${err.stack}\n`);
    stderr.write(`error: the bot failed: ${oneLine(err)}\n`);
    return EXIT.BOT_ERROR;
  }
}

/** An error as "Name: message" on one line (its message's first line). */
function oneLine(err) {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.split('\n')[0];
}

/**
 * Connect to `referee` and play until goodbye. Resolves to an exit code as run() does
 * (2 for a TLS certificate that cannot be used, or an address grpc-js refuses outright;
 * most bad addresses fail only when dialled, as unreachable: 4); rejects
 * with the error if the bot's own code throws (after closing the connection).
 *
 * A stream that breaks after the referee welcomed the bot is reconnected, on a new
 * connection with the same token, for up to `reconnectTimeout` seconds: a referee keeps
 * the seat of a remote bot that comes back within its grace window, and tells it the
 * match again (the driver skips what the bot already knows). So is a first stream that
 * breaks before its welcome, or that the referee refuses as one of too many (for now).
 * While trying again, a refusal of the token as still in use, or by a referee shutting
 * down (it may be restarting), is waited out too; any other refusal is final.
 *
 * @param {object|Function} bot
 * @param {object} options
 * @param {string} options.referee "host:port" or "unix:/path"
 * @param {string} options.token
 * @param {string} [options.name] the name to announce (default: the bot's)
 * @param {boolean} [options.tls] speak TLS, trusting the system's certificates
 * @param {string} [options.tlsCa] speak TLS, trusting the PEM certificate(s) in this file
 * @param {number} [options.connectTimeout] seconds to keep retrying the connection (30)
 * @param {number} [options.reconnectTimeout] seconds to try to reconnect after the stream
 *   breaks, or the referee refuses the bot as one of too many (10; 0: never)
 * @param {boolean} [options.verbose] log every message on stderr
 * @param {{write: Function}} [options.stderr] where errors and logs go (process.stderr)
 * @param {string} [options.protoDir] the folder holding ono99/v1/*.proto (see proto.js)
 */
async function play(bot, {
  referee, token, name, tls = false, tlsCa, connectTimeout = DEFAULT_CONNECT_TIMEOUT,
  reconnectTimeout = DEFAULT_RECONNECT_TIMEOUT, verbose = false, stderr = process.stderr, protoDir,
} = {}) {
  const say = (text) => stderr.write(`${text}\n`);
  const botName = name || (bot && bot.name) || 'bot';
  const driver = new Driver(bot, { log: makeLog(stderr, botName, verbose) });
  const protocol = loadProtocol(protoDir);
  const secure = Boolean(tls || tlsCa) && !isUnixAddress(referee);
  let credentials;
  try {
    credentials = channelCredentials(protocol.grpc, secure, tlsCa);
  } catch (err) {  // the certificate file cannot be read, or holds no certificate
    say(`error: ${err.message}`);
    return EXIT.USAGE;
  }
  // While reconnecting: {since (ms), pause (s), last (the last try's failure, if it got that
  // far), resumeKey (the broken session's, to take its place; '' if none was welcomed),
  // welcomed (a session was), exit (the code to give up with)}.
  let lost = null;
  // When the reconnect window of the last welcome began (null: it was the first
  // connection's). A session that breaks within QUICK_BREAK of its welcome counts against
  // the same window: a referee that welcomes the bot and fails at once is not tried
  // forever, as when each welcome restarted the window.
  let window = null;
  let welcomedAt = 0;
  for (;;) {
    let client;
    try {
      client = new protocol.RefereeClient(referee, credentials, CHANNEL_OPTIONS);
    } catch (err) {  // grpc-js cannot parse the address at all
      say(`error: bad referee address ${JSON.stringify(referee)}: ${err.message}`);
      return EXIT.USAGE;
    }
    let end;
    try {
      const wait = lost ? reconnectTimeout - secondsSince(lost.since) : connectTimeout;
      if (!(await waitForReady(client, Math.max(wait, 0)))) {
        if (!lost) {
          say(`error: no referee reachable at ${referee} within ${connectTimeout} s` +
            unreachableHint(referee, secure));
          return EXIT.UNREACHABLE;
        }
        const last = lost.last ?? `no referee reachable at ${referee}`;
        say(`error: could not ${lost.welcomed ? 'reconnect' : 'connect'} to the referee within ` +
          `${reconnectTimeout} s (last: ${last})`);
        return lost.exit;
      }
      const hello = driver.hello(token, name, SDK, lost ? lost.resumeKey : '');
      const welcomeWait = Math.max(wait, MIN_WELCOME_WAIT);
      end = await session(client, protocol, driver, hello, welcomeWait, () => {
        welcomedAt = Date.now();
        if (lost) {
          say(`${lost.welcomed ? 're' : ''}connected to the referee after ` +
            `${secondsSince(lost.since).toFixed(1)} s`);
          window = lost.since;
        }
        lost = null;
      });
    } finally {
      client.close();
    }
    if (end.exit === EXIT.OK) return EXIT.OK;
    if (end.welcomed && reconnectTimeout > 0 && window !== null &&
        secondsSince(welcomedAt) < QUICK_BREAK) {
      // broke soon after a welcome in a reconnect window: the same window goes on
      lost = {
        since: window, pause: RECONNECT_BACKOFF.first, last: end.error,
        resumeKey: driver.welcome.resumeKey, welcomed: true, exit: EXIT.BROKEN,
      };
    } else if (end.welcomed && reconnectTimeout > 0) {  // the stream we played on broke
      say(`warning: ${end.error}; reconnecting for up to ${reconnectTimeout} s`);
      lost = {
        since: Date.now(), pause: RECONNECT_BACKOFF.first, last: null,
        resumeKey: driver.welcome.resumeKey, welcomed: true, exit: EXIT.BROKEN,
      };
    } else if (!lost && end.firstRetry && reconnectTimeout > 0) {
      // the first stream broke before its welcome, or the referee has too many bots at once
      say(`warning: ${end.error}; trying again for up to ${reconnectTimeout} s`);
      lost = {
        since: Date.now(), pause: RECONNECT_BACKOFF.first, last: null, resumeKey: '',
        welcomed: false, exit: end.exit,
      };
    } else if (lost && end.retry) {
      lost.last = end.error;
    } else {
      say(`error: ${end.error}`);
      return end.exit;
    }
    const left = reconnectTimeout - secondsSince(lost.since);
    const pause = lost.pause * (1 + RECONNECT_BACKOFF.jitter * (2 * Math.random() - 1));
    await sleep(Math.max(0, Math.min(pause, left)) * 1000);  // then a last try, or the verdict
    lost.pause = Math.min(lost.pause * 2, RECONNECT_BACKOFF.max);
  }
}

/**
 * Plaintext, or if `secure` TLS trusting the certificates in the file `tlsCa` (else the
 * system's). Throws an Error saying why when `tlsCa` cannot be used.
 */
function channelCredentials(grpc, secure, tlsCa) {
  if (!secure) return grpc.credentials.createInsecure();
  if (!tlsCa) return grpc.credentials.createSsl();
  let pem;
  try {
    pem = fs.readFileSync(tlsCa);
  } catch (err) {
    throw new Error(`cannot read the TLS certificate ${tlsCa}: ${err.message}`);
  }
  // grpc-js takes any bytes here and fails only when connecting, like an absent referee
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error(`${tlsCa} holds no PEM certificate (no -----BEGIN CERTIFICATE----- line)`);
  }
  return grpc.credentials.createSsl(pem);
}

/** A unix socket is always plaintext: it never leaves the machine (`arena match` gives
 * its bots one, whatever TLS settings they inherit). */
function isUnixAddress(referee) {
  return /^unix(-abstract)?:/.test(referee);
}

/** A plaintext bot and a TLS referee (or the reverse) never connect: say what to check. */
function unreachableHint(referee, secure) {
  if (isUnixAddress(referee)) return '';
  return secure
    ? ' over TLS (is its certificate the one trusted? --tls-ca FILE names it)'
    : ' (a referee that speaks TLS needs --tls-ca FILE or --tls)';
}

function waitForReady(client, seconds) {
  return new Promise((resolve) => {
    client.waitForReady(Date.now() + seconds * 1000, (err) => resolve(!err));
  });
}

function secondsSince(ms) {
  return (Date.now() - ms) / 1000;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * One Play stream: `hello`, then answer every message until goodbye. Calls `onWelcome` when
 * the referee accepts the hello. The referee's first message (its welcome, or a refusal)
 * is awaited for up to `welcomeTimeout` seconds: a referee answers at once, and a server
 * that takes the stream and says nothing must not hold the bot. Resolves to how it ended: {exit: EXIT.OK} after goodbye,
 * else {exit, error (what to report), welcomed, retry (worth another try while
 * reconnecting: a broken stream, the token still in use, the referee shutting down, or
 * too many bots at once),
 * firstRetry (worth another try even at the first connection: a broken stream, or too
 * many bots at once; any other refusal the referee sent is final)}. Rejects with the
 * bot's error.
 */
async function session(client, protocol, driver, hello, welcomeTimeout, onWelcome) {
  const call = client.Play();
  let noWelcome = false;
  const watchdog = setTimeout(() => {
    noWelcome = true;
    call.cancel();
  }, welcomeTimeout * 1000);
  // Stream errors are read through the iterator below; this listener only keeps one that
  // comes after we stopped reading (e.g. from cancel()) from crashing the process.
  call.on('error', () => {});
  const log = driver.log;
  const send = (msg) => {
    if (log.debugging) log.debug(`send ${shown(msg)}`);
    call.write(msg);
  };
  const messages = call[Symbol.asyncIterator]();
  const { status } = protocol.grpc;
  try {
    send(hello);
    while (!driver.finished) {
      let next;
      try {
        next = await messages.next();
      } catch (err) {  // the stream ended with an error status before the goodbye
        if (noWelcome) {
          return {
            exit: EXIT.BROKEN,
            error: `no welcome from the referee within ${welcomeTimeout} s of the hello`,
            welcomed: false, retry: true, firstRetry: true,
          };
        }
        return {
          exit: EXIT.BROKEN,
          error: `connection to the referee broke: ${status[err.code] || err.code}: ` +
            printable(err.details ?? err.message),
          welcomed: driver.welcome !== null,
          retry: true,
          firstRetry: true,
        };
      }
      clearTimeout(watchdog);
      if (next.done) break;
      if (log.debugging) log.debug(`received ${shown(next.value)}`);
      const answers = await driver.handle(next.value);
      if (next.value.kind === 'welcome') onWelcome();
      for (const answer of answers) send(answer);
    }
  } catch (err) {
    if (err instanceof RefereeError) {  // as a broken connection: try again, then give up
      return {
        exit: EXIT.BROKEN, error: err.message, welcomed: driver.welcome !== null, retry: true,
        firstRetry: true,
      };
    }
    if (err instanceof RefusedError) {
      const tooMany = err.code === 'too_many';
      return {
        exit: EXIT.REFUSED, error: err.message, welcomed: false,
        retry: tooMany || TRANSIENT_WHILE_RECONNECTING.has(err.code), firstRetry: tooMany,
      };
    }
    throw err;  // the bot's own code failed: the caller reports it
  } finally {
    clearTimeout(watchdog);
    call.cancel();
  }
  if (!driver.finished) {
    return {
      exit: EXIT.BROKEN, error: 'the referee closed the stream without a goodbye',
      welcomed: driver.welcome !== null, retry: true, firstRetry: true,
    };
  }
  return { exit: EXIT.OK };
}

/** `msg` as JSON for the verbose log, its secrets hidden: stderr goes to log files. The
 * referee's strings are escaped (JSON leaves C1 and format characters as they are) but not
 * cut: the verbose log is asked for, and shows every message whole. */
function shown(msg) {
  const hide = (value) => (value ? '<hidden>' : value);
  return printable(JSON.stringify(msg, (key, value) => (['token', 'resumeKey'].includes(key) ? hide(value) : value)),
    Infinity);
}

module.exports = {
  run, play, parseCommandLine, addressProblem, EXIT, SDK, ENV_REFEREE, ENV_TOKEN, ENV_NAME, ENV_TLS, ENV_TLS_CA,
  ENV_RECONNECT_TIMEOUT, CHANNEL_OPTIONS,
};
