'use strict';
/**
 * The Dev Containers CLI, started before its arguments are known (pending-cli.ts starts it with
 * the job, alongside the clone). argv: [script]. Reads and compiles `script` (a CommonJS file: the CLI's
 * bundle, or a test's fake) and loads the Node built-ins the bundle uses, without running it;
 * then reads ONE JSON line on stdin, { args, env }, sets process.argv and adds env to
 * process.env, and runs the script as the main module. Stdin closed without a message: exits 0,
 * having run nothing. Nothing is written before the message (its output is the CLI's).
 */
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

const PRELOADED_BUILTINS = [
  'assert',
  'buffer',
  'child_process',
  'crypto',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'https',
  'net',
  'os',
  'path',
  'stream',
  'string_decoder',
  'tls',
  'tty',
  'url',
  'util',
  'zlib',
];

function compile(filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const body = source.startsWith('#!') ? `//${source}` : source;
  const script = new vm.Script(Module.wrap(body), { filename });
  return script.runInThisContext();
}

function runAsMain(filename, wrapper, message) {
  const mod = new Module(filename, null);
  mod.filename = filename;
  mod.paths = Module._nodeModulePaths(path.dirname(filename));
  mod.id = '.';
  process.mainModule = mod;
  require.main = mod;
  Module._cache[filename] = mod;
  const req = Module.createRequire(filename);
  req.main = mod;
  process.argv = [process.argv[0], filename, ...message.args];
  Object.assign(process.env, message.env);
  wrapper.call(mod.exports, mod.exports, req, mod, filename, path.dirname(filename));
  mod.loaded = true;
}

function readMessage(onMessage) {
  let text = '';
  process.stdin.setEncoding('utf8');
  const onData = (chunk) => {
    text += chunk;
    const end = text.indexOf('\n');
    if (end < 0) return;
    process.stdin.off('data', onData);
    process.stdin.off('end', onEnd);
    // Not destroyed: fd 0 stays open (at its end, the parent closed it), never reused by a file.
    process.stdin.pause();
    onMessage(JSON.parse(text.slice(0, end)));
  };
  const onEnd = () => process.exit(0);
  process.stdin.on('data', onData);
  process.stdin.on('end', onEnd);
}

const filename = path.resolve(process.argv[2]);
const wrapper = compile(filename);
for (const name of PRELOADED_BUILTINS) require(name);
readMessage((message) => runAsMain(filename, wrapper, message));
