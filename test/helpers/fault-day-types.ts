/**
 * What a day of faults (test/helpers/fault-day.ts) is told, what it sends and what it reports:
 * shared by its stage, its traffic, its faults and its count.
 */
import type { BuildRecord } from '../../src/builds/types.js';

export interface DayOptions {
  /** Builds sent between faults (at least this many in all are sent, one every `everyMs`). */
  readonly minBuilds: number;
  readonly everyMs: number;
  /** How many times the whole sequence of faults is repeated. */
  readonly rounds: number;
  readonly builderStopMs: number;
  readonly registryOutageMs: number;
  readonly cutWindowMs: number;
  readonly buildTimeoutSeconds: number;
  readonly log: (line: string) => void;
}

export type Fault = 'replica killed' | 'Redis restarted' | 'builder stopped' | 'registry 503' | 'polls cut';

/** A failure's cause, read from its answer: which fault it names ('other' names none). */
export type Cause = 'replica lost' | 'not started' | 'registry 503' | 'builder down' | 'Redis down' | 'other';

export interface Sent {
  readonly requestId: string;
  readonly mode: 'async' | 'sync' | 'ibs';
  readonly reuse: boolean;
  readonly replica: string;
  /** What POST /build answered (a status), or why no answer came. */
  posted?: number | string;
  /** A synchronous answer's body. */
  syncBody?: Record<string, unknown>;
  /** The build's id, once known (202, or found by its request id). */
  id?: string;
  /** The record as it ended (or as it stood when the wait ran out). */
  record?: BuildRecord;
  ibsExit?: number | string;
  /** The fault running when it was sent, for ibs builds. */
  during?: Fault;
  /** When it was sent (ms since the epoch). */
  readonly sentAt: number;
}

export interface FaultWindow {
  readonly fault: Fault;
  readonly startedAt: number;
  readonly endedAt: number;
  /** Ms from the end to the first build answered successfully after it; undefined: none. */
  recoveryMs?: number;
}

export interface DayReport {
  readonly sent: readonly Sent[];
  readonly faults: readonly FaultWindow[];
  accepted: number;
  refused: Record<string, number>;
  success: number;
  failures: Record<Cause, number>;
  otherFailures: string[];
  /** Each failure: its cause, when it ran (from the first fault), its error and its log's tail. */
  failureDetails: string[];
  lost: string[];
  pushedTwice: string[];
  brokenTags: string[];
  undelivered: string[];
  ibsNotZero: string[];
  /**
   * Synchronous answers the record contradicts (the client was told one thing, GET /builds/{id}
   * says another), as `id: answered N, record says ...`.
   */
  contradicted: string[];
  /** Ids of the builds that ran on the killed replica when it died, and their causes. */
  killedRunning: string[];
}

export const finished = (r: BuildRecord | undefined): boolean => r?.phase === 'finished';
