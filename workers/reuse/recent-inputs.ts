/**
 * The key inputs of the last build of each repository, branch and target on this instance, so
 * that a build that runs can say which inputs changed. Bounded: the oldest entries go first.
 */
import type { BuildKeyInput } from './build-key.js';

const MAX_ENTRIES = 1000;

export class RecentInputs {
  private readonly entries = new Map<string, BuildKeyInput>();

  constructor(private readonly max = MAX_ENTRIES) {}

  get(key: string): BuildKeyInput | undefined {
    return this.entries.get(key);
  }

  set(key: string, input: BuildKeyInput): void {
    this.entries.delete(key);
    this.entries.set(key, input);
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
