// npm run stack -- up|down|status|env|stop-bridge <a|b>|start-bridge <a|b>
//   up      checks the prerequisites (prerequisites.ts: exit 1 naming what is missing and the install
//           command), starts (or reuses) every component, prints a per-component report and the start
//           time, writes $STACK_DIR/env and $STACK_DIR/env.json. Exit 1 if any component failed.
//   down    stops everything the stack started (process groups, then a sweep by marker variable).
//   status  shows each daemon's pid and whether it is alive. Exit 3 if something is not running.
//   env     prints the endpoints as KEY=value lines (exit 1 if the stack is not up).
//   stop-bridge / start-bridge <a|b>   stops / starts one builder's endpoints (builders.ts).
//   up --session FILE / down --session FILE   down stops only a stack that this up started
//           (session.ts; test/run.sh uses it).
import fs from 'node:fs';
import { startBuilderBridge, stopBuilderBridge } from './builders.js';
import { BUILDER_IDS, type BuilderId } from './components/engines.js';
import { COMPONENTS } from './components/index.js';
import type { Component, Ctx, Outcome } from './components/types.js';
import { computeEnv, formatEnv, removeEnv, writeEnv } from './endpoints.js';
import { stackEnv } from './env.js';
import { type Layout, layout } from './layout.js';
import { acquireLock } from './lock.js';
import { missingMessage, missingPrerequisites } from './prerequisites.js';
import { baseEnv, describePid, livePid, markedPids, stopComponent, sweep } from './proc.js';
import { currentOwnership, readSession, writeSession } from './session.js';
import { ensureState, loadState } from './state.js';

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;

interface Result {
  name: string;
  ok: boolean;
  outcome?: Outcome;
  ms: number;
  error?: string;
}

async function up(l: Layout, session?: string): Promise<number> {
  const t0 = Date.now();
  const missing = missingPrerequisites(baseEnv().PATH ?? '');
  if (missing.length > 0) {
    console.error(missingMessage(missing));
    return 1;
  }
  const release = await acquireLock(l);
  try {
    if (session !== undefined) writeSession(session, currentOwnership(l));
    const s = await ensureState(l);
    const ctx: Ctx = { l, s };
    const results = new Map<string, Result>();
    const running = new Map<string, Promise<Result>>();
    const byName = new Map(COMPONENTS.map((c) => [c.name, c]));
    const start = (c: Component): Promise<Result> => {
      const existing = running.get(c.name);
      if (existing) return existing;
      const p = (async (): Promise<Result> => {
        const deps = await Promise.all(
          c.deps.map((d) => {
            const dc = byName.get(d);
            if (!dc) throw new Error(`unknown dependency ${d} of ${c.name}`);
            return start(dc);
          }),
        );
        const failed = deps.filter((d) => !d.ok).map((d) => d.name);
        const t = Date.now();
        if (failed.length > 0)
          return { name: c.name, ok: false, ms: 0, error: `not started: ${failed.join(', ')} failed` };
        try {
          const outcome = await c.ensure(ctx);
          return { name: c.name, ok: true, outcome, ms: Date.now() - t };
        } catch (err) {
          return { name: c.name, ok: false, ms: Date.now() - t, error: (err as Error).message };
        }
      })();
      running.set(c.name, p);
      return p;
    };
    for (const r of await Promise.all(COMPONENTS.map(start))) results.set(r.name, r);

    const width = Math.max(...COMPONENTS.map((c) => c.name.length));
    for (const c of COMPONENTS) {
      const r = results.get(c.name)!;
      const status = r.ok ? `ok    ${r.outcome!.padEnd(8)}` : 'FAIL          ';
      console.log(`  ${status} ${c.name.padEnd(width)} ${secs(r.ms)}`);
      if (!r.ok) console.log(r.error!.replace(/^/gm, '        | '));
    }
    const failed = [...results.values()].filter((r) => !r.ok);
    if (failed.length > 0) {
      removeEnv(l);
      console.log(`stack up FAILED (${failed.map((f) => f.name).join(', ')}) after ${secs(Date.now() - t0)}`);
      console.log(`logs: ${l.logs}; stop what did start with: npm run stack -- down`);
      return 1;
    }
    const env = await computeEnv(l, s);
    writeEnv(l, env);
    for (const id of ['A', 'B'] as const)
      console.log(
        `  builder ${id.toLowerCase()}: ${env[`BUILDER_${id}_ENDPOINT`]} (mutual TLS: ${env[`BUILDER_${id}_TLS_ENDPOINT`]})`,
      );
    console.log(`  builder TLS: CA ${env.BUILDER_TLS_CA_FILE}, client ${env.BUILDER_TLS_CLIENT_CERT_FILE}`);
    console.log(
      `stack up in ${secs(Date.now() - t0)} (state ${l.root}; env in ${l.envFile} and ${l.envJsonFile})`,
    );
    return 0;
  } finally {
    release();
  }
}

async function down(l: Layout): Promise<number> {
  const t0 = Date.now();
  if (!fs.existsSync(l.root)) {
    console.log(`nothing to stop (${l.root} does not exist)`);
    return 0;
  }
  const release = await acquireLock(l);
  try {
    removeEnv(l);
    const s = loadState(l);
    const ctx: Ctx | undefined = s ? { l, s } : undefined;
    // Engines last: everything else first (the bridges talk to them).
    const others = COMPONENTS.filter((c) => !c.engine).flatMap((c) => c.daemons);
    const stopped = await Promise.all(others.map(async (d) => ((await stopComponent(l, d)) ? d : undefined)));
    const engines = COMPONENTS.filter((c) => c.engine);
    const enginesUp = engines.flatMap((c) => c.daemons).filter((d) => livePid(l, d) !== undefined);
    await Promise.all(
      engines.map(async (c) => {
        if (c.cleanup && ctx) await c.cleanup(ctx);
        else for (const d of c.daemons) await stopComponent(l, d, 15_000);
      }),
    );
    stopped.push(...enginesUp);
    const swept = await sweep(l);
    const left = markedPids(l);
    const names = stopped.filter((x): x is string => !!x);
    console.log(`stopped: ${names.length > 0 ? names.join(', ') : 'nothing was running'}`);
    if (swept.length > 0) console.log(`swept leftovers:\n${swept.map((x) => `  ${x}`).join('\n')}`);
    if (left.length > 0) {
      console.log(`STILL RUNNING:\n${left.map((p) => `  ${describePid(p)}`).join('\n')}`);
      return 1;
    }
    console.log(`stack down in ${secs(Date.now() - t0)}; no stack process left`);
    return 0;
  } finally {
    release();
  }
}

function status(l: Layout): number {
  let allUp = true;
  for (const c of COMPONENTS) {
    for (const d of c.daemons) {
      const pid = livePid(l, d);
      if (pid === undefined) allUp = false;
      console.log(
        `  ${pid !== undefined ? 'running' : 'stopped'} ${d}${pid !== undefined ? ` (pid ${pid})` : ''}`,
      );
    }
  }
  const envReady = fs.existsSync(l.envJsonFile);
  console.log(`env: ${envReady ? l.envJsonFile : 'not written (run: npm run stack -- up)'}`);
  const extra = markedPids(l).length;
  console.log(`stack processes (incl. children): ${extra}`);
  return allUp && envReady ? 0 : 3;
}

function printEnv(l: Layout): number {
  process.stdout.write(formatEnv(stackEnv(l.root)));
  return 0;
}

async function main(): Promise<number> {
  const cmd = process.argv[2];
  const l = layout();
  switch (cmd) {
    case 'up':
      return up(l, sessionArg());
    case 'down': {
      const session = sessionArg();
      if (session === undefined) return down(l);
      const ownership = readSession(session);
      if (ownership === 'owned') return down(l);
      console.log(
        ownership === 'shared'
          ? `leaving the stack in ${l.root} up: it was running before this session started`
          : `not stopping the stack in ${l.root}: ${session} does not say that this session started it`,
      );
      return 0;
    }
    case 'status':
      return status(l);
    case 'env':
      return printEnv(l);
    case 'stop-bridge':
    case 'start-bridge': {
      const id = process.argv[3];
      if (!isBuilderId(id)) break;
      await (cmd === 'stop-bridge' ? stopBuilderBridge(id, l.root) : startBuilderBridge(id, l.root));
      console.log(`builder ${id}'s bridge ${cmd === 'stop-bridge' ? 'stopped' : 'running'}`);
      return 0;
    }
  }
  console.error(
    `usage: npm run stack -- up|down [--session FILE]|status|env|stop-bridge <${BUILDER_IDS.join('|')}>|start-bridge <${BUILDER_IDS.join('|')}>\n` +
      '(state dir: IBS_STACK_DIR, default /tmp/ibs-stack)',
  );
  return 2;
}

/** `--session FILE` after the command (see session.ts). */
function sessionArg(): string | undefined {
  const i = process.argv.indexOf('--session');
  if (i < 0) return undefined;
  const file = process.argv[i + 1];
  if (!file) throw new Error('--session needs a file');
  return file;
}

function isBuilderId(x: string | undefined): x is BuilderId {
  return (BUILDER_IDS as readonly string[]).includes(x ?? '');
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
