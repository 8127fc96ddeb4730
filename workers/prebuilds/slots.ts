/**
 * The prebuild in flight of each configuration and branch: latest push wins, so a new head
 * replaces the slot's build (which the caller cancels). A slot is freed when its build ends.
 * Slots are keyed by `branchKey` (src/prebuilds/names.ts).
 */
export interface Slot {
  readonly buildId: string;
  readonly commit: string;
  readonly deliveryId: string;
}

export class BranchSlots {
  readonly #slots = new Map<string, Slot>();
  /** The key each slot's build holds: a build's end frees its slot in O(1). */
  readonly #keys = new Map<string, string>();

  get(key: string): Slot | undefined {
    return this.#slots.get(key);
  }

  /** Takes the slot for `slot`; answers the build it replaces, if any. O(1). */
  take(key: string, slot: Slot): Slot | undefined {
    const replaced = this.#slots.get(key);
    if (replaced !== undefined) this.#keys.delete(replaced.buildId);
    this.#slots.set(key, slot);
    this.#keys.set(slot.buildId, key);
    return replaced;
  }

  /** Frees the slot of a build that ended; answers its key when it still held one. O(1). */
  end(buildId: string): string | undefined {
    const key = this.#keys.get(buildId);
    if (key === undefined) return undefined;
    this.#keys.delete(buildId);
    this.#slots.delete(key);
    return key;
  }
}
