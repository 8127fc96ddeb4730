/** What GET /usage accepts of each parameter (docs/usage.md), as its 400 tells it. Pure. */

/** The longest range one GET /usage reads (days). */
export const MAX_USAGE_RANGE_DAYS = 800;

export const USAGE_QUERY_RULES: Readonly<Record<string, string>> = {
  from: 'from: an ISO date (YYYY-MM-DD) or a date-time on the hour (YYYY-MM-DDTHH:00:00Z)',
  to: `to: as from, after it, at most ${MAX_USAGE_RANGE_DAYS} days later`,
  by: 'by: a comma-separated list of tenant, repository, trigger, day, each once',
  other: 'no other parameter (one of each at most)',
};
