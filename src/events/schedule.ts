/**
 * The retry schedule: the delay before attempt n+1 is `retrySeconds[n-1]` plus up to 10 % jitter;
 * once the list is used up the delivery fails. Pure (the random source is passed in).
 */
const JITTER = 0.1;

/** The delay after `attempts` failed attempts, or undefined when the schedule is used up. */
export function retryDelayMs(
  attempts: number,
  retrySeconds: readonly number[],
  random: () => number = Math.random,
): number | undefined {
  const seconds = retrySeconds[attempts - 1];
  if (seconds === undefined) return undefined;
  return Math.round(seconds * 1000 * (1 + JITTER * random()));
}
