/**
 * The exit codes of `ibs`, one table: what each means to a CI job (docs/ci.md lists them; a unit
 * test keeps the two in step) and which HTTP answer leads to which.
 */

export const EXIT = {
  ok: 0,
  failed: 1,
  refused: 2,
  busy: 3,
  unreachable: 4,
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Every code with its meaning, in order (for --help and docs/ci.md). */
export const EXIT_CODES: readonly { readonly code: ExitCode; readonly meaning: string }[] = [
  { code: EXIT.ok, meaning: 'built or reused (other commands: done; `image exists`: the image exists)' },
  {
    code: EXIT.failed,
    meaning:
      'the build failed (500): the error and the last 30 lines of the failing log on stderr (`image exists`: absent)',
  },
  {
    code: EXIT.refused,
    meaning:
      'the request was refused (400, 401, 403, 404, 413), no token could be had, or an argument of ibs is wrong',
  },
  { code: EXIT.busy, meaning: 'still busy (429) when --timeout ran out' },
  {
    code: EXIT.unreachable,
    meaning:
      'the server could not be reached, the connection was lost, it was still unavailable (503) when --timeout ran out, or it answered something unexpected',
  },
  {
    code: EXIT.interrupted,
    meaning: 'interrupted (SIGINT, SIGTERM): the build was cancelled on the server (DELETE /builds/{id})',
  },
];

/**
 * The exit code of a final HTTP status (429 and 503 are retried before they get here; 401 and 403
 * never are: the same token would be refused again).
 *
 * | status            | exit |
 * | ----------------- | ---- |
 * | 2xx               | 0    |
 * | 400, 404, 413     | 2    |
 * | 401, 403          | 2    |
 * | 429               | 3    |
 * | 500               | 1    |
 * | anything else     | 4    |
 */
export function exitForStatus(status: number): ExitCode {
  if (status >= 200 && status < 300) return EXIT.ok;
  if ([400, 401, 403, 404, 413].includes(status)) return EXIT.refused;
  if (status === 429) return EXIT.busy;
  if (status === 500) return EXIT.failed;
  return EXIT.unreachable;
}
