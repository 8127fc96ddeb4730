/**
 * A redis-server of a test's own (not the stack's shared one), on a free loopback port with a
 * random password, that the test can stop and start again on the same port (outage tests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisAnswers, redisUrl, writeRedisConfig } from '../stack/redis-server.js';
import { freePort } from '../stack/proc.js';
import { eventually } from './eventually.js';

export interface RedisProcess {
  readonly url: string;
  readonly password: string;
  readonly port: number;
  /** Kills the server (SIGKILL: like a crash or a network loss); resolves once it has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves once it answers. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  dispose(): Promise<void>;
}

/**
 * `args` are added to redis-server's command line after its config file (they win over it), e.g.
 * `['--appendonly', 'yes']` for a server that keeps its data across a restart.
 */
export async function startRedis(args: readonly string[] = []): Promise<RedisProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'ibs-redis-'));
  const port = await freePort();
  const password = `canary-${randomBytes(12).toString('hex')}`;
  const config = writeRedisConfig(dir, port, password);
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async (): Promise<void> => {
    const proc = spawn('redis-server', [config, ...args], { stdio: 'ignore' });
    child = proc;
    let problem: Error | undefined;
    exited = new Promise((resolve) => {
      proc.once('exit', () => resolve());
      proc.once('error', (err) => {
        problem = err;
        resolve();
      });
    });
    await eventually(
      async () => {
        if (problem !== undefined) throw new Error(`redis-server could not be started: ${problem.message}`);
        if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`);
        return redisAnswers(port, password, 500);
      },
      { interval: 50, what: 'redis-server to answer' },
    );
  };
  const stop = async (): Promise<void> => {
    child?.kill('SIGKILL');
    await exited;
    child = undefined;
  };
  await start();
  return {
    url: redisUrl(port, password),
    password,
    port,
    stop,
    start,
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
