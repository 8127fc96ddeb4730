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

  get(key: string): Slot | undefined {
    return this.#slots.get(key);
  }

  /** Takes the slot for `slot`; answers the build it replaces, if any. */
  take(key: string, slot: Slot): Slot | undefined {
    const replaced = this.#slots.get(key);
    this.#slots.set(key, slot);
    return replaced;
  }

  /** Frees the slot of a build that ended; answers its key when it still held one. */
  end(buildId: string): string | undefined {
    for (const [key, slot] of this.#slots) {
      if (slot.buildId !== buildId) continue;
      this.#slots.delete(key);
      return key;
    }
    return undefined;
  }
}
