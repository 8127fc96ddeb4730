// Memory benchmark (needs the stack: `npm run stack -- up`; run with `npm run bench:memory`, which
// builds first). Not a test: it prints figures.
//
// Starts the service as users run it (`node dist/src/main.js`, no tsx, no dev dependencies loaded,
// no tracing or error tracking configured) and reads its resident set size (VmRSS) from /proc:
//   - at start (just after it logs `listening`) and while it sits idle, once per IDLE_STEP_SECONDS:
//     V8 shrinks the heap of an idle process after a few tens of seconds, so the idle figure is the
//     one after IDLE_SECONDS without requests;
//   - right after WARM_REQUESTS warm `GET /image` (the stack's token registry, base image), and
//     again after IDLE_SECONDS of idling.
// Target: idle RSS under 80 MiB.
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stackEnv } from '../test/stack/env.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist', 'src', 'main.js');
const TARGET_MIB = 80;
const IDLE_SECONDS = 40;
const IDLE_STEP_SECONDS = 10;
const WARM_REQUESTS = 1000;

const env = stackEnv();

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) / 1024;
}

const mib = (n: number): string => `${n.toFixed(1)} MiB`;
const sleep = (seconds: number): Promise<void> => new Promise((r) => setTimeout(r, seconds * 1000));

/** RSS samples while the service sits idle for IDLE_SECONDS; returns the last one. */
async function idle(pid: number, label: string): Promise<number> {
  let last = NaN;
  for (let t = IDLE_STEP_SECONDS; t <= IDLE_SECONDS; t += IDLE_STEP_SECONDS) {
    await sleep(IDLE_STEP_SECONDS);
    last = await rssMiB(pid);
    console.log(`  ${label}, idle ${String(t).padStart(2)} s: ${mib(last)}`);
  }
  return last;
}

async function main(): Promise<void> {
  try {
    await readFile(MAIN);
  } catch {
    throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm run bench:memory does)`);
  }
  const home = await mkdtemp(join(tmpdir(), 'ibs-bench-memory-'));
  const child = spawn(process.execPath, [MAIN, '--port', '0', '--insecure-registries', env.REGISTRY_TOKEN], {
    cwd: home,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'listening' && entry.port !== undefined) resolve(entry.port);
      });
    });
    const pid = child.pid!;
    console.log(`service: node ${MAIN} (pid ${pid}, port ${port}), Node ${process.version}`);
    const atStart = await rssMiB(pid);
    console.log(`  at start (listening): ${mib(atStart)}`);
    const idleRss = await idle(pid, 'before requests');

    const [name, tag] = ['dev/base', '1'];
    const url = `http://127.0.0.1:${port}/image?registry=${env.REGISTRY_TOKEN}&name=${name}&tag=${tag}`;
    const headers = {
      'x-registry-username': env.REGISTRY_TOKEN_USER,
      'x-registry-password': env.REGISTRY_TOKEN_PASSWORD,
    };
    const get = async (): Promise<void> => {
      const res = await fetch(url, { headers });
      if (res.status !== 200) throw new Error(`GET /image answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    await get(); // the cold one: token, manifest
    const started = performance.now();
    for (let i = 0; i < WARM_REQUESTS; i++) await get();
    const seconds = (performance.now() - started) / 1000;
    const afterRequests = await rssMiB(pid);
    console.log(
      `  after ${WARM_REQUESTS} warm GET /image (${(WARM_REQUESTS / seconds).toFixed(0)}/s, sequential): ${mib(afterRequests)}`,
    );
    const idleAfter = await idle(pid, 'after requests');

    console.log('\nsummary:');
    console.log(`  RSS at start:                          ${mib(atStart)}`);
    console.log(`  idle RSS (${IDLE_SECONDS} s without requests):     ${mib(idleRss)}`);
    console.log(`  RSS right after ${WARM_REQUESTS} warm GET /image: ${mib(afterRequests)}`);
    console.log(`  idle RSS ${IDLE_SECONDS} s after those requests:   ${mib(idleAfter)}`);
    console.log(`  target idle RSS < ${TARGET_MIB} MiB: ${idleRss < TARGET_MIB ? 'OK' : 'MISSED'}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(home, { recursive: true, force: true });
  }
}

await main();
