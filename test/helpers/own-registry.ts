/**
 * A registry process of a test's (or benchmark's) own: bookworm's docker-registry on a free port
 * with its own storage, delete on. Its garbage collection (`docker-registry garbage-collect`) may
 * run while it is stopped; the shared stack's registries are never collected (others push to them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { stringify } from 'yaml';
import { eventually } from './eventually.js';
import { freePort } from '../stack/proc.js';

export interface OwnRegistry {
  /** `127.0.0.1:<port>` */
  readonly host: string;
  /** Bytes under its storage folder. */
  storageBytes(): Promise<number>;
  /** Stops it, runs `docker-registry garbage-collect` on its storage, starts it again on the same port. */
  collectGarbage(): Promise<void>;
  stop(): Promise<void>;
  dispose(): Promise<void>;
}

export async function startOwnRegistry(): Promise<OwnRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'ibs-own-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const config = join(dir, 'config.yml');
  await writeFile(
    config,
    stringify({
      version: 0.1,
      log: { level: 'error', accesslog: { disabled: true } },
      storage: { filesystem: { rootdirectory: join(dir, 'storage') }, delete: { enabled: true } },
      http: { addr: host, secret: randomBytes(16).toString('hex') },
    }),
  );
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = async (): Promise<void> => {
    const proc = spawn('docker-registry', ['serve', config], { stdio: 'ignore' });
    child = proc;
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    await eventually(async () => (await fetch(`http://${host}/v2/`).catch(() => undefined))?.status === 200, {
      timeout: 30_000,
      interval: 100,
      what: 'the own registry to answer',
    });
  };
  const stop = async (): Promise<void> => {
    child?.kill('SIGTERM');
    await exited;
    child = undefined;
  };
  await start();
  return {
    host,
    storageBytes: async () =>
      Number((await execa('du', ['-sb', join(dir, 'storage')])).stdout.split('\t')[0]),
    collectGarbage: async () => {
      await stop();
      await execa('docker-registry', ['garbage-collect', config]);
      await start();
    },
    stop,
    dispose: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
