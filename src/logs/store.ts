import { createWriteStream } from 'node:fs';
import { access, mkdir, readFile, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/types.js';
import { serviceError } from '../errors/errors.js';
import { followFile, LiveLog } from './live.js';
import { isLogId, newLogId } from './log-id.js';
import { createLineMasker } from '../secrets/line-masker.js';
import { configSecrets } from '../secrets/masking.js';
import { LOG_KINDS, type CommandLogWriter, type LogKind, type LogStore } from './types.js';

type StoreConfig = Pick<Config, 'scratchDir' | 'logs' | 'gitCredentials' | 'registryAuth' | 'redis'>;

/** The store's state: its directory, the logs being written, the closed ones per kind. */
interface FileLogs {
  readonly dir: string;
  readonly retention: number;
  readonly serverSecrets: readonly string[];
  readonly closed: Map<LogKind, string[]>;
  /** The logs being written now. */
  readonly live: Map<string, LiveLog>;
}

const pathOf = (logs: FileLogs, id: string): string => join(logs.dir, `${id}.log`);

function checkedPath(logs: FileLogs, id: string): string {
  if (!isLogId(id)) throw serviceError('INVALID_LOG_ID', { id });
  return pathOf(logs, id);
}

/** An unknown log (its file missing) is LOG_NOT_FOUND. */
function notFoundAs(id: string) {
  return (err: unknown): never => {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw serviceError('LOG_NOT_FOUND', {}, { logId: id });
    throw err;
  };
}

async function prune(logs: FileLogs, kind: LogKind): Promise<void> {
  const ids = logs.closed.get(kind) ?? [];
  while (ids.length > logs.retention) {
    const oldest = ids.shift();
    if (oldest !== undefined) await unlink(pathOf(logs, oldest)).catch(() => undefined);
  }
}

async function open(logs: FileLogs, kind: LogKind, secrets: readonly string[]): Promise<CommandLogWriter> {
  const id = newLogId(kind);
  const stream = createWriteStream(pathOf(logs, id), { flags: 'wx', mode: 0o600 });
  await new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  const liveLog = new LiveLog();
  logs.live.set(id, liveLog);
  const changed = (): void => liveLog.changed();
  // Whole lines only, so a secret split across chunks is still found (line-masker.ts).
  const masker = createLineMasker([...logs.serverSecrets, ...secrets]);
  return {
    id,
    write(chunk) {
      for (const lines of masker.push(chunk)) stream.write(lines, changed);
    },
    addSecrets(more) {
      masker.addSecrets(more);
    },
    async close() {
      for (const rest of masker.end()) stream.write(rest, changed);
      await new Promise<void>((resolve) => stream.end(resolve));
      logs.live.delete(id);
      liveLog.ended();
      logs.closed.get(kind)?.push(id);
      await prune(logs, kind).catch(() => undefined);
    },
  };
}

async function remove(logs: FileLogs, id: string): Promise<void> {
  await unlink(checkedPath(logs, id)).catch(notFoundAs(id));
  for (const ids of logs.closed.values()) {
    const at = ids.indexOf(id);
    if (at >= 0) ids.splice(at, 1);
  }
}

/**
 * Logs live in `<scratch>/logs`, one 0600 file per command. Only the newest `retention`
 * closed logs per kind are kept; a log being written is never pruned, and pruning never throws.
 * The directory is emptied at startup: logs do not survive the instance. A log being written
 * can be read (what reached the file so far) and followed (live.ts).
 */
export async function createLogStore(config: StoreConfig): Promise<LogStore> {
  const logs: FileLogs = {
    dir: join(config.scratchDir, 'logs'),
    retention: config.logs.retention,
    serverSecrets: configSecrets(config),
    closed: new Map(LOG_KINDS.map((kind) => [kind, []])),
    live: new Map(),
  };
  await rm(logs.dir, { recursive: true, force: true });
  await mkdir(logs.dir, { recursive: true, mode: 0o700 });
  return {
    open: (kind, secrets = []) => open(logs, kind, secrets),
    async read(id) {
      const path = checkedPath(logs, id);
      // Complete before reading means the text read is whole.
      const complete = !logs.live.has(id);
      return { text: await readFile(path, 'utf8').catch(notFoundAs(id)), complete };
    },
    async follow(id, signal) {
      const path = checkedPath(logs, id);
      const liveLog = logs.live.get(id);
      await access(path).catch(notFoundAs(id));
      return followFile(path, liveLog, signal);
    },
    remove: (id) => remove(logs, id),
  };
}
