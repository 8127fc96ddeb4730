/**
 * What the usage keeps and how it is asked (docs/usage.md): one interface, two stores: the
 * scratch space's (embedded, file-store.ts) and Redis (every replica's, redis-store.ts). Each
 * operation's cost is stated where it is declared.
 */
import type { BucketRow } from './buckets.js';

/** One build's usage, written once (keyed by its build id). */
export interface UsageWrite {
  readonly buildId: string;
  readonly hour: number;
  /** The row's store id (buckets.ts rowId). */
  readonly rowId: string;
  readonly vector: readonly number[];
  readonly tenant: string;
  readonly month: string;
  readonly runSeconds: number;
  /** The image this build made: its refs and run time (kept for its reuses). */
  readonly madeImage?: { readonly refs: readonly string[]; readonly runSeconds: number };
  /** Each step it ran: its identity and time (kept for the builds that find it cached). */
  readonly ranSteps: readonly { readonly id: string; readonly seconds: number }[];
}

/** What a write did: whether it counted (false: the build was counted before), the month's total. */
export interface WriteResult {
  readonly counted: boolean;
  /** The tenant's run seconds of the month, this build included. */
  readonly monthRunSeconds: number;
}

export interface UsageStore {
  /**
   * The run time of the first of `imageRefs` known, and of each step identity of `stepIds` (its
   * last run). O(refs + steps): one round trip.
   */
  savedTimes(
    imageRefs: readonly string[],
    stepIds: readonly string[],
  ): Promise<{ image?: number; steps: readonly (number | undefined)[] }>;
  /** Adds one build's usage unless its id was counted already. O(1 + steps): one atomic step. */
  add(write: UsageWrite): Promise<WriteResult>;
  /** Every bucket row of the hours in [fromHour, toHour). O(hours x rows): one round trip. */
  read(fromHour: number, toHour: number): Promise<BucketRow[]>;
  /** The run seconds of `tenant` in `month` (`YYYY-MM`). O(1). */
  monthRunSeconds(tenant: string, month: string): Promise<number>;
  close(): Promise<void>;
}
