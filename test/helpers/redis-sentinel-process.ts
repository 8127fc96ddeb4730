/**
 * Redis Sentinel of a test's own (Debian's redis-server, the second in Sentinel mode): a primary, a
 * replica of it and three Sentinels that monitor it as `primary` (quorum 2), one password for all,
 * on free loopback ports. `failover()` asks a Sentinel to promote the replica (SENTINEL FAILOVER)
 * and resolves once every Sentinel names the new primary.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RedisTarget } from '../../src/config/redis-target.js';
import { freePort } from '../stack/proc.js';
import { redisAnswers, writeRedisConfig } from '../stack/redis-server.js';
import { eventually } from './eventually.js';

const run = promisify(execFile);
const PRIMARY_NAME = 'primary';

export interface RedisSentinelProcess {
  readonly password: string;
  readonly target: RedisTarget;
  /** The port of the primary the Sentinels name now. */
  primaryPort(): Promise<number>;
  /** Promotes the replica; resolves once every Sentinel names it. */
  failover(): Promise<void>;
  dispose(): Promise<void>;
}

async function sentinelCommand(port: number, password: string, args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    env: { PATH: process.env.PATH, REDISCLI_AUTH: password },
    timeout: 5000,
  });
  return stdout;
}

/** Writes a Sentinel's config (it rewrites it as it learns); returns its path. */
function writeSentinelConfig(dir: string, port: number, primary: number, password: string): string {
  const file = join(dir, `sentinel-${port}.conf`);
  const lines = [
    `port ${port}`,
    'bind 127.0.0.1',
    `dir ${dir}`,
    `requirepass ${password}`,
    `sentinel monitor ${PRIMARY_NAME} 127.0.0.1 ${primary} 2`,
    `sentinel auth-pass ${PRIMARY_NAME} ${password}`,
    `sentinel down-after-milliseconds ${PRIMARY_NAME} 2000`,
    `sentinel failover-timeout ${PRIMARY_NAME} 10000`,
  ];
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return file;
}

/** The primary's port as each Sentinel names it. */
async function namedPrimaries(sentinels: readonly number[], password: string): Promise<number[]> {
  return Promise.all(
    sentinels.map(async (port) => {
      const out = await sentinelCommand(port, password, [
        'sentinel',
        'get-master-addr-by-name',
        PRIMARY_NAME,
      ]);
      return Number(out.trim().split('\n')[1]);
    }),
  );
}

/** Until every Sentinel knows the replica on `replica`, up (a failover needs it). */
async function replicaKnown(sentinels: readonly number[], password: string, replica: number): Promise<void> {
  await eventually(
    async () => {
      const replicas = await Promise.all(
        sentinels.map((port) => sentinelCommand(port, password, ['sentinel', 'replicas', PRIMARY_NAME])),
      );
      return replicas.every((out) => out.includes(String(replica)) && !out.includes('s_down'));
    },
    { timeout: 30_000, interval: 200, what: 'the Sentinels to know the replica' },
  );
}

/** The set's handle, once its processes are up. */
function handle(
  sentinels: readonly number[],
  password: string,
  dispose: () => Promise<void>,
): RedisSentinelProcess {
  const primaryPort = async (): Promise<number> => (await namedPrimaries(sentinels, password))[0] ?? 0;
  return {
    password,
    target: {
      kind: 'sentinel',
      sentinels: sentinels.map((port) => ({ host: '127.0.0.1', port })),
      name: PRIMARY_NAME,
      password,
      tls: false,
    },
    primaryPort,
    async failover() {
      const before = await primaryPort();
      await sentinelCommand(sentinels[0] ?? 0, password, ['sentinel', 'failover', PRIMARY_NAME]);
      await eventually(
        async () => (await namedPrimaries(sentinels, password)).every((port) => port !== before),
        {
          timeout: 30_000,
          interval: 200,
          what: 'every Sentinel to name the new primary',
        },
      );
    },
    dispose,
  };
}

export async function startRedisSentinels(): Promise<RedisSentinelProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-redis-sentinel-'));
  const password = `canary-${randomBytes(12).toString('hex')}`;
  const children: ChildProcess[] = [];
  const exits: Promise<void>[] = [];
  const start = (args: string[]): void => {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    children.push(child);
    exits.push(new Promise((resolve) => child.once('exit', () => resolve())));
  };
  const dispose = async (): Promise<void> => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(exits);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [primary, replica] = [await freePort(), await freePort()];
    const auth = [`masterauth ${password}`];
    start([writeRedisConfig(join(dir, 'primary'), primary, password, auth)]);
    start([
      writeRedisConfig(join(dir, 'replica'), replica, password, [...auth, `replicaof 127.0.0.1 ${primary}`]),
    ]);
    const sentinels: number[] = [];
    for (let i = 0; i < 3; i += 1) sentinels.push(await freePort());
    for (const port of sentinels) start([writeSentinelConfig(dir, port, primary, password), '--sentinel']);
    await eventually(
      async () =>
        (
          await Promise.all([primary, replica, ...sentinels].map((port) => redisAnswers(port, password, 500)))
        ).every(Boolean),
      { interval: 100, what: 'the primary, its replica and the Sentinels to answer' },
    );
    await replicaKnown(sentinels, password, replica);
    return handle(sentinels, password, dispose);
  } catch (err) {
    await dispose();
    throw err;
  }
}
