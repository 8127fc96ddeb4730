/**
 * Each builder's cache use as BuildKit reports it (`docker buildx du --builder <name>` with the
 * service's buildx, through src/exec), for readiness (docs/fleet.md). A reading is kept for a
 * minute; a read never waits: it answers the last reading and starts a refresh when that is older.
 * A builder buildx does not know yet (no build has set it up) has none, asked again after 5 s.
 */
import { run } from '../../../src/exec/run.js';
import type { ProcessGroups } from '../../../src/exec/process-groups.js';
import { dockerEnv, existingNodes, type RemoteBuilderConfig } from '../remote-builder.js';

/** How long a reading is answered before it is read again. */
const CACHE_USE_TTL_MS = 60_000;
/** How soon a builder with no reading (not set up yet, or buildx failed) is read again. */
const NO_READING_RETRY_MS = 5000;
const DU_TIMEOUT_SECONDS = 30;

/** A builder's cache as `buildx du` totals it, in bytes. */
export interface CacheUse {
  readonly totalBytes: number;
  readonly reclaimableBytes: number;
  readonly sharedBytes: number;
  readonly privateBytes: number;
  /** ISO 8601: when it was read. */
  readonly readAt: string;
}

const UNITS: Record<string, number> = { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, PB: 1e15 };

/** `16.24MB` -> 16240000 (docker's decimal units); undefined when it is not a size (pure). */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([kKMGTP]?B)$/.exec(text.trim());
  const unit = m?.[2] === undefined ? undefined : UNITS[m[2]];
  return m?.[1] === undefined || unit === undefined ? undefined : Math.round(Number(m[1]) * unit);
}

/** The totals of `docker buildx du` output (its closing lines), or undefined without them (pure). */
export function parseDiskUsage(output: string): Omit<CacheUse, 'readAt'> | undefined {
  const totals = new Map<string, number>();
  for (const line of output.split('\n')) {
    const found = /^(Shared|Private|Reclaimable|Total):\s+(\S+)\s*$/.exec(line);
    const size = found?.[2] === undefined ? undefined : parseSize(found[2]);
    if (found?.[1] !== undefined && size !== undefined) totals.set(found[1], size);
  }
  const total = totals.get('Total');
  if (total === undefined) return undefined;
  return {
    totalBytes: total,
    reclaimableBytes: totals.get('Reclaimable') ?? 0,
    sharedBytes: totals.get('Shared') ?? 0,
    privateBytes: totals.get('Private') ?? 0,
  };
}

export interface CacheUseOptions {
  readonly config: RemoteBuilderConfig;
  readonly groups?: ProcessGroups;
  readonly ttlMs?: number;
  /** Aborts a reading in progress (the service is stopping). */
  readonly signal?: AbortSignal;
}

export class BuilderCacheUse {
  readonly #options: CacheUseOptions;
  readonly #readings = new Map<string, { readonly use?: CacheUse; readonly at: number }>();
  readonly #reading = new Map<string, Promise<void>>();

  constructor(options: CacheUseOptions) {
    this.#options = options;
  }

  /** The last reading of builder `name` (undefined: none yet); a refresh starts when it is stale. */
  read(name: string): CacheUse | undefined {
    const last = this.#readings.get(name);
    const ttl =
      last?.use === undefined
        ? Math.min(NO_READING_RETRY_MS, this.#options.ttlMs ?? CACHE_USE_TTL_MS)
        : (this.#options.ttlMs ?? CACHE_USE_TTL_MS);
    if ((last === undefined || Date.now() - last.at >= ttl) && !this.#reading.has(name)) {
      const reading = this.refresh(name).finally(() => this.#reading.delete(name));
      this.#reading.set(name, reading);
    }
    return last?.use;
  }

  /** Resolves once no reading runs (the drain waits for them: `buildx du` writes its config dir). */
  async settled(): Promise<void> {
    while (this.#reading.size > 0) await Promise.all([...this.#reading.values()]);
  }

  /** Reads builder `name`'s cache use now (never throws: a failure leaves no reading). */
  async refresh(name: string): Promise<void> {
    const { config, groups, signal } = this.#options;
    let use: CacheUse | undefined;
    try {
      if ((await existingNodes(config.dockerConfigDir, name)) !== undefined) {
        const listed = await run('docker', ['buildx', 'du', '--builder', name], {
          baseEnv: dockerEnv(config, config.dockerConfigDir, config.dockerConfigDir),
          captureStdout: true,
          timeoutSeconds: DU_TIMEOUT_SECONDS,
          ...(groups === undefined ? {} : { groups }),
          ...(signal === undefined ? {} : { signal }),
        });
        const totals = parseDiskUsage(listed.stdout);
        if (totals !== undefined) use = { ...totals, readAt: new Date().toISOString() };
      }
    } catch {
      // No reading: readiness shows none for this builder until a later one succeeds.
    }
    this.#readings.set(name, { ...(use === undefined ? {} : { use }), at: Date.now() });
  }
}
