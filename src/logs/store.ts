import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, mkdir, readFile, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config/types.js';
import { invalidLogId, logNotFound } from '../errors.js';
import { followFile, LiveLog } from './live.js';
import { createLineMasker } from './line-masker.js';
import { configSecrets } from './masking.js';
import { LOG_KINDS, type CommandLogWriter, type LogKind, type LogStore } from './types.js';

/** `git-` or `img-` followed by a lower-case UUID. */
export const LOG_ID_PATTERN = /^(git|img)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isLogId(id: string): boolean {
  return LOG_ID_PATTERN.test(id);
}

/**
 * Logs live in `<scratch>/logs`, one 0600 file per command. Only the newest `retention`
 * closed logs per kind are kept; a log being written is never pruned, and pruning never throws.
 * The directory is emptied at startup: logs do not survive the instance. A log being written
 * can be read (what reached the file so far) and followed (live.ts).
 */
export async function createLogStore(
  config: Pick<Config, 'scratchDir' | 'commandLogRetention' | 'gitCredentials' | 'registryAuth' | 'redisUrl'>,
): Promise<LogStore> {
  const dir = join(config.scratchDir, 'logs');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const serverSecrets = configSecrets(config);
  const closed = new Map<LogKind, string[]>(LOG_KINDS.map((kind) => [kind, []]));
  const pathOf = (id: string): string => join(dir, `${id}.log`);
  /** The logs being written now. */
  const live = new Map<string, LiveLog>();

  function checkedPath(id: string): string {
    if (!isLogId(id)) throw invalidLogId(id);
    return pathOf(id);
  }

  async function prune(kind: LogKind): Promise<void> {
    const ids = closed.get(kind) ?? [];
    while (ids.length > config.commandLogRetention) {
      const oldest = ids.shift();
      if (oldest !== undefined) await unlink(pathOf(oldest)).catch(() => undefined);
    }
  }

  return {
    async open(kind, secrets = []) {
      const id = `${kind}-${randomUUID()}`;
      const stream = createWriteStream(pathOf(id), { flags: 'wx', mode: 0o600 });
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
      const liveLog = new LiveLog();
      live.set(id, liveLog);
      const changed = (): void => liveLog.changed();
      // Whole lines only, so a secret split across chunks is still found (line-masker.ts).
      const masker = createLineMasker([...serverSecrets, ...secrets]);
      const writer: CommandLogWriter = {
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
          live.delete(id);
          liveLog.ended();
          closed.get(kind)?.push(id);
          await prune(kind).catch(() => undefined);
        },
      };
      return writer;
    },

    async read(id) {
      const path = checkedPath(id);
      // Complete before reading means the text read is whole.
      const complete = !live.has(id);
      try {
        return { text: await readFile(path, 'utf8'), complete };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw logNotFound(id);
        throw err;
      }
    },

    async follow(id, signal) {
      const path = checkedPath(id);
      const liveLog = live.get(id);
      try {
        await access(path);
        return followFile(path, liveLog, signal);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw logNotFound(id);
        throw err;
      }
    },

    async remove(id) {
      try {
        await unlink(checkedPath(id));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw logNotFound(id);
        throw err;
      }
      for (const ids of closed.values()) {
        const at = ids.indexOf(id);
        if (at >= 0) ids.splice(at, 1);
      }
    },
  };
}
