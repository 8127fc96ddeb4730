// The one poll helper of the tests: wait for an observable condition instead of sleeping a fixed time.
// `check` answers undefined or false for "not yet"; it is tried every `interval` ms until `timeout` ms,
// then the wait fails naming what it waited for. An error thrown by `check` ends the wait at once
// (a check that expects errors while something starts catches them itself).

export interface EventuallyOptions {
  /** Milliseconds before giving up (default 30 000: room for a loaded machine). */
  readonly timeout?: number;
  /** Milliseconds between two checks (default 10). */
  readonly interval?: number;
  /** What is awaited, for the failure's message; a function is asked at the timeout (the state then). */
  readonly what?: string | (() => string);
}

type Pending = undefined | false;

/** The first value of `check` that is neither undefined nor false. */
export async function eventually<T>(
  check: () => T | Pending | Promise<T | Pending>,
  options: EventuallyOptions = {},
): Promise<Exclude<T, Pending>> {
  const { timeout = 30_000, interval = 10, what = 'a condition' } = options;
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, Pending>;
    if (Date.now() >= deadline) {
      const described = typeof what === 'function' ? what() : what;
      throw new Error(`timed out after ${timeout} ms waiting for ${described}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
