/**
 * Label entries: what counts as one, and how an entry names its origin. Pure.
 */

export type Entry = Record<string, unknown>;

/** A plain JSON object (not an array, not null). */
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Own property lookup: a label key such as `constructor` never reaches Object.prototype. */
export const own = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;

/**
 * The origin of an entry as the Dev Containers CLI names it: its `id` (a feature reference),
 * else `devcontainer.json` (the CLI uses `id ?? 'devcontainer.json'`).
 */
export const originOf = (entry: Entry): string => {
  const id = own(entry, 'id');
  return id === undefined || id === null ? 'devcontainer.json' : String(id);
};

/** How the CLI prints an origin: `devcontainer.json`, or `Feature '<id>'`. */
export const originLabel = (origin: string): string =>
  origin === 'devcontainer.json' ? origin : origin ? `Feature '${origin}'` : '???';
