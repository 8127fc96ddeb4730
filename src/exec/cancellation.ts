/**
 * Why a running job was stopped before its end: the reason an AbortSignal carries to the exec
 * wrapper, which writes it into the command's log and into the failure it reports.
 */
export type CancellationKind = 'client_gone' | 'deadline' | 'shutdown' | 'superseded' | 'deleted';

const TEXT: Record<CancellationKind, (seconds?: number, by?: string) => string> = {
  client_gone: () => 'cancelled: the client went away before the build ended',
  deadline: (seconds) => `killed at the job deadline (${seconds ?? 0} s: clone timeout + build timeout)`,
  shutdown: () => 'killed: the service is stopping',
  superseded: () => 'cancelled: superseded by a newer head of the branch (docs/prebuilds.md)',
  deleted: (_seconds, by) => `cancelled by ${by ?? 'DELETE /builds/{id}'}`,
};

export class Cancellation extends Error {
  readonly kind: CancellationKind;
  /** Who cancelled it (`deleted`: the DELETE /builds/{id} request). */
  readonly by: string | undefined;
  constructor(kind: CancellationKind, seconds?: number, by?: string) {
    super(TEXT[kind](seconds, by));
    this.name = 'Cancellation';
    this.kind = kind;
    this.by = by;
  }
}

/** The cancellation behind an aborted signal's reason, if it is one. */
export const cancellationOf = (reason: unknown): Cancellation | undefined =>
  reason instanceof Cancellation ? reason : undefined;
