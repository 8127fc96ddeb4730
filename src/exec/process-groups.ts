/**
 * The process groups of the commands running now, owned by one object created at start-up
 * (src/service.ts) and handed to the exec wrapper: whatever still runs when the service exits is
 * killed, and a caller can see how many groups are alive (tests assert "no process left").
 */
export class ProcessGroups {
  readonly #live = new Set<number>();

  /** Kills every live group with SIGKILL when `proc` exits (call once, at start-up). */
  killOnExit(proc: Pick<NodeJS.Process, 'once'>): this {
    proc.once('exit', () => {
      for (const pgid of this.#live) killGroup(pgid, 'SIGKILL');
    });
    return this;
  }

  add(pgid: number): void {
    this.#live.add(pgid);
  }

  delete(pgid: number): void {
    this.#live.delete(pgid);
  }

  get size(): number {
    return this.#live.size;
  }
}

/** Sends `signal` to the process group `pgid`; a group already gone is not an error. */
export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}
