/**
 * The key inputs of the last build of each repository, branch and target, so that a build that
 * runs can say which inputs changed (its record's `rebuiltBecause`, its log), kept in the leases'
 * store (leases/recent-store.ts). The secrets identity is kept only as its digest, so nothing kept
 * can be tested against a guessed value.
 */
import { createHash } from 'node:crypto';
import { memoryRecentStore, type RecentStore } from '../leases/recent-store.js';
import type { BuildKeyInput } from './build-key.js';
import { inputChanges, type InputChange } from './input-changes.js';

export class RecentInputs {
  constructor(private readonly store: RecentStore = memoryRecentStore()) {}

  /** What differs in `after` from the last build of `id`, or undefined when none is known. */
  async changes(id: string, after: BuildKeyInput): Promise<InputChange[] | undefined> {
    const text = await this.store.get(id);
    if (text === undefined) return undefined;
    return inputChanges(JSON.parse(text) as BuildKeyInput, kept(after));
  }

  set(id: string, input: BuildKeyInput): Promise<void> {
    return this.store.set(id, JSON.stringify(kept(input)));
  }
}

/** The inputs as kept: the secrets identity by its digest. */
function kept(input: BuildKeyInput): BuildKeyInput {
  if (input.secretsIdentity === undefined) return input;
  const digest = createHash('sha256').update(input.secretsIdentity).digest('hex');
  return { ...input, secretsIdentity: `sha256:${digest}` };
}
