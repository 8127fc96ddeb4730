/**
 * The queue's upkeep, on a slow timer (docs/queue.md): this replica's heartbeat, a look for a
 * message missed, and every other tick the reap: builds held by replicas that stopped beating are
 * taken out; running builds whose lease expired run again when any replica may (found so by
 * several reaps in a row), else stop counting toward their tenant's quota. An idle replica sends
 * Redis about 0.6 commands a second for all of it.
 */
import type { Logger } from '../../src/observability/logger.js';
import type { QueueEntry } from '../../src/queue/fair-order.js';
import type { LostRun, QueueStore } from '../../src/queue/types.js';

const UPKEEP_INTERVAL_MS = 5000;
/** A running build younger than this is counted whatever its lease says (its record is being written). */
const RUNNING_GRACE_MS = 30_000;

export interface UpkeepDeps {
  readonly store: Pick<QueueStore, 'heartbeat' | 'reap'>;
  /** Whether the store is shared by replicas (Redis mode): otherwise nothing to beat or reap. */
  readonly shared: boolean;
  readonly kick: () => void;
  /** Ends the builds the reap took out. */
  readonly reaped: (entries: readonly QueueEntry[]) => Promise<void>;
  /** Runs again the builds reaps in a row found lost with their replica (strikesOf). */
  readonly lost: (runs: readonly LostRun[]) => Promise<void>;
  readonly logger: Pick<Logger, 'warn'>;
  readonly now: () => number;
  /** Default UPKEEP_INTERVAL_MS (unit tests pass a short one). */
  readonly intervalMs?: number;
}

const runKey = (run: LostRun): string => `${run.id}\0${run.replica}`;
/**
 * Reaps in a row that must find a build lost before it runs again: two when its replica stopped
 * beating (a live replica whose Redis failed beats again by the second), four when it beats (it
 * takes its leases again within 5 s of Redis answering, unless it no longer runs the build).
 */
const strikesOf = (run: LostRun): number => (run.beating === true ? 4 : 2);

/** Starts the upkeep; the answer stops it. */
export function startUpkeep(deps: UpkeepDeps): () => void {
  const beat = (): void => {
    if (deps.shared) void deps.store.heartbeat().catch(() => undefined);
  };
  let tick = 0;
  /** The builds the last reaps found lost, with how many reaps in a row did. */
  let suspects = new Map<string, number>();
  const reap = async (): Promise<void> => {
    const { dropped, lost } = await deps.store.reap(deps.now(), RUNNING_GRACE_MS);
    if (dropped.length > 0) await deps.reaped(dropped);
    suspects = new Map(lost.map((run) => [runKey(run), (suspects.get(runKey(run)) ?? 0) + 1]));
    const confirmed = lost.filter((run) => (suspects.get(runKey(run)) ?? 0) >= strikesOf(run));
    if (confirmed.length > 0) await deps.lost(confirmed);
  };
  const timer = setInterval(() => {
    beat();
    deps.kick();
    tick += 1;
    if (deps.shared && tick % 2 === 0) {
      void reap().catch((err: unknown) => deps.logger.warn({ err }, 'the build queue could not be reaped'));
    }
  }, deps.intervalMs ?? UPKEEP_INTERVAL_MS);
  timer.unref();
  beat();
  return () => clearInterval(timer);
}
