/**
 * Why a running job was stopped before its end: the reason an AbortSignal carries to the exec
 * wrapper, which writes it into the command's log and into the failure it reports.
 */
export type CancellationKind = 'client_gone' | 'deadline' | 'shutdown' | 'superseded';

const TEXT: Record<CancellationKind, (seconds?: number) => string> = {
  client_gone: () => 'cancelled: the client went away before the build ended',
  deadline: (seconds) => `killed at the job deadline (${seconds ?? 0} s: clone timeout + build timeout)`,
  shutdown: () => 'killed: the service is stopping',
  superseded: () => 'cancelled: superseded by a newer head of the branch (docs/prebuilds.md)',
};

export class Cancellation extends Error {
  readonly kind: CancellationKind;
  constructor(kind: CancellationKind, seconds?: number) {
    super(TEXT[kind](seconds));
    this.name = 'Cancellation';
    this.kind = kind;
  }
}

/** The cancellation behind an aborted signal's reason, if it is one. */
export const cancellationOf = (reason: unknown): Cancellation | undefined =>
  reason instanceof Cancellation ? reason : undefined;
