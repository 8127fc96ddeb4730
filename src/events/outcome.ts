/**
 * What an attempt's answer means for the delivery, as a table: a 2xx ends it, 410 disables the
 * subscription, 429 and 503 wait their Retry-After, anything else (a timeout or an unreachable
 * receiver too) retries on the schedule. Pure.
 */
export type AttemptAnswer =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string | null }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'unreachable' };

export type Verdict =
  | { readonly next: 'delivered' }
  | { readonly next: 'disable' }
  | { readonly next: 'retry'; readonly waitMs?: number };

/** Retry-After: seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  if (header === null || header === undefined || header.trim() === '') return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const RULES: readonly {
  readonly when: (status: number) => boolean;
  readonly verdict: (answer: AttemptAnswer) => Verdict;
}[] = [
  { when: (s) => s >= 200 && s < 300, verdict: () => ({ next: 'delivered' }) },
  { when: (s) => s === 410, verdict: () => ({ next: 'disable' }) },
  {
    when: (s) => s === 429 || s === 503,
    verdict: (answer) => {
      const waitMs = answer.kind === 'status' ? retryAfterMs(answer.retryAfter) : undefined;
      return waitMs === undefined ? { next: 'retry' } : { next: 'retry', waitMs };
    },
  },
];

export function verdictOf(answer: AttemptAnswer): Verdict {
  if (answer.kind !== 'status') return { next: 'retry' };
  const rule = RULES.find((r) => r.when(answer.status));
  return rule === undefined ? { next: 'retry' } : rule.verdict(answer);
}

/** How the last status reads in the delivery list. */
export const lastStatusOf = (answer: AttemptAnswer): number | string =>
  answer.kind === 'status' ? answer.status : answer.kind;
