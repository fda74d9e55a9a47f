'use strict';
/**
 * Loads the protocol (proto/ono99/v1/*.proto) at run time with @grpc/proto-loader.
 *
 * Why at run time and not generated code: the repository's .proto files stay the one
 * source of truth, there is no build step, and no generated file can drift from them.
 *
 * Why `longs: String`: turn ids and bot seeds are uint64 and may exceed 2^53, where a JS
 * number stops being exact. As decimal strings they pass through protobufjs untouched
 * (decoding writes the exact unsigned value, encoding parses it back exactly), so the
 * SDK echoes a turn id bit for bit without converting it. The model exposes them as
 * BigInt for bots that want to compute with them.
 */

const fs = require('node:fs');
const path = require('node:path');

let grpc;
let protoLoader;
try {
  grpc = require('@grpc/grpc-js');
  protoLoader = require('@grpc/proto-loader');
} catch (err) {
  if (err && err.code === 'MODULE_NOT_FOUND') {
    // The hint alone, and exit: a stack trace under it would push it out of the last
    // lines of stderr that the arena's verdict on the bot shows.
    const dir = path.resolve(__dirname, '..');
    process.stderr.write(`error: ono99-bot: its dependencies are not installed; run \`npm ci\` ` +
      `in ${dir} (${err.message.split('\n')[0]})\n`);
    process.exit(2);
  }
  throw err;
}

/** Environment variable naming the folder that holds ono99/v1/referee.proto. */
const ENV_PROTO_DIR = 'ONO99_PROTO_DIR';

/**
 * The repository's proto/ folder, found from this file: clients/node/lib -> ../../../proto.
 * The package is meant to be used from inside the repository (bots require it by a
 * relative path), so this holds wherever the bot's own folder is.
 */
const DEFAULT_PROTO_DIR = path.resolve(__dirname, '..', '..', '..', 'proto');

const LOADER_OPTIONS = Object.freeze({
  keepCase: false,  // camelCase field names: matchStart, turnId, ...
  longs: String,    // exact uint64/int64 (see above)
  enums: Number,    // cards as their enum numbers; the model maps them to tokens
  defaults: true,   // unset scalars read as 0 / "" / false, as in every other protobuf runtime
  arrays: true,     // unset repeated fields read as []
  oneofs: true,     // `kind` names the field set in a oneof (BotMessage, RefereeMessage, Event)
});

/**
 * Which folder to load: an explicit one, else $ONO99_PROTO_DIR, else the repository's.
 * @param {string} [dir]
 * @param {NodeJS.ProcessEnv} [env]
 */
function resolveProtoDir(dir, env = process.env) {
  return path.resolve(dir || env[ENV_PROTO_DIR] || DEFAULT_PROTO_DIR);
}

// Parsed protocols by folder. Parsing takes tens of milliseconds and the result is never
// modified, so sharing it between clients and fake referees in one process is safe.
const loaded = new Map();

/**
 * The protocol loaded from `dir` (see resolveProtoDir).
 * @returns {{dir: string, grpc: object, RefereeClient: Function, play: object,
 *            service: object, definition: object}}
 *   `play` is the Play method's definition: requestSerialize/requestDeserialize,
 *   responseSerialize/responseDeserialize; `service` is what a grpc-js Server needs.
 */
function loadProtocol(dir) {
  const root = resolveProtoDir(dir);
  const cached = loaded.get(root);
  if (cached) return cached;
  const file = path.join(root, 'ono99', 'v1', 'referee.proto');
  if (!fs.existsSync(file)) {
    throw new Error(`ono99-bot: no protocol at ${file}; the SDK loads the repository's proto/ ` +
      `folder (pass protoDir or set $${ENV_PROTO_DIR} to a folder holding ono99/v1/*.proto)`);
  }
  const definition = protoLoader.loadSync(['ono99/v1/referee.proto'], {
    ...LOADER_OPTIONS, includeDirs: [root],
  });
  const pkg = grpc.loadPackageDefinition(definition);
  const RefereeClient = pkg.ono99.v1.Referee;
  const protocol = Object.freeze({
    dir: root,
    grpc,
    definition,
    RefereeClient,
    service: RefereeClient.service,
    play: RefereeClient.service.Play,
  });
  loaded.set(root, protocol);
  return protocol;
}

/** Names of an enum of the loaded protocol, by number, e.g. enumNames(p, 'ErrorCode'). */
function enumNames(protocol, name) {
  const values = protocol.definition[`ono99.v1.${name}`].type.value;
  const out = [];
  for (const v of values) out[v.number] = v.name;
  return out;
}

module.exports = { loadProtocol, resolveProtoDir, enumNames, DEFAULT_PROTO_DIR, ENV_PROTO_DIR };
