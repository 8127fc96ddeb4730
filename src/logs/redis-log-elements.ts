/**
 * The list elements a Redis log writer builds: masked output copied into reused buffers with room
 * for their command around them (redis/framed-command.ts), so that each goes to Redis as it lies:
 * one copy per byte, no fresh memory. The queue holds the element being filled and those ready.
 */
import { FRAME_HEAD_ROOM, FRAME_TAIL_ROOM } from '../redis/framed-command.js';

/**
 * A list element (and so one append) holds at most this much. Measured (50 MB of appends to a
 * local redis-server): Redis stores 1 MiB elements for about half the CPU of 64 KiB ones and less
 * than 4 MiB ones (fewer allocations and fresh pages); 512 KiB and 2 MiB capture as fast as 1 MiB.
 * A follower reads a bounded number of them per round trip.
 */
const ELEMENT_BYTES = 1024 * 1024;
/**
 * Appends sent before the first is answered. With Redis on the same machine 1, 2 and 4 measure the
 * same (bench:redis is CPU-bound); across a network each answer costs a round trip, which this hides.
 */
export const MAX_IN_FLIGHT = 4;

/** One list element: its bytes lie in `space` from FRAME_HEAD_ROOM on, kept until it is stored. */
export interface Element {
  readonly space: Buffer;
  length: number;
}

export const bytesOf = (element: Element): Buffer =>
  element.space.subarray(FRAME_HEAD_ROOM, FRAME_HEAD_ROOM + element.length);

/**
 * Reusable buffers that elements are built in (with room for their command around them), taken
 * back once stored: copying into memory already in use costs less than fresh allocations. Made
 * once per store; at most `keepIdle` are kept between builds.
 */
export interface ElementSpaces {
  take(): Buffer;
  give(space: Buffer): void;
}

export function createElementSpaces(keepIdle = 2 * MAX_IN_FLIGHT): ElementSpaces {
  const idle: Buffer[] = [];
  return {
    take: () => idle.pop() ?? Buffer.allocUnsafeSlow(FRAME_HEAD_ROOM + ELEMENT_BYTES + FRAME_TAIL_ROOM),
    give(space) {
      if (idle.length < keepIdle) idle.push(space);
    },
  };
}

/** The elements not yet sent, in order: those complete (ready), then the one being filled. */
export class ElementQueue {
  readonly #spaces: ElementSpaces;
  #filling: Element | undefined;
  readonly #ready: Element[] = [];

  constructor(spaces: ElementSpaces) {
    this.#spaces = spaces;
  }

  /** Complete elements waiting to be sent. */
  get ready(): number {
    return this.#ready.length;
  }

  /** An element is being filled (never an empty one). */
  get filling(): boolean {
    return this.#filling !== undefined;
  }

  /** Copies `bytes` into elements (no reference to them is kept); full ones become ready. */
  fill(bytes: Buffer): void {
    let from = 0;
    while (from < bytes.length) {
      this.#filling ??= { space: this.#spaces.take(), length: 0 };
      const end = Math.min(bytes.length, from + ELEMENT_BYTES - this.#filling.length);
      this.#filling.length += bytes.copy(
        this.#filling.space,
        FRAME_HEAD_ROOM + this.#filling.length,
        from,
        end,
      );
      from = end;
      if (this.#filling.length === ELEMENT_BYTES) this.seal();
    }
  }

  /** The element being filled is complete. */
  seal(): void {
    if (this.#filling !== undefined) this.#ready.push(this.#filling);
    this.#filling = undefined;
  }

  /** The first ready element, taken to be sent. */
  next(): Element {
    return this.#ready.shift() as Element;
  }

  /** Every ready element, taken. */
  takeReady(): Element[] {
    return this.#ready.splice(0);
  }

  /** Elements sent but not stored go back to the front, in order. */
  requeue(elements: readonly Element[]): void {
    this.#ready.unshift(...elements);
  }

  /** Buffers done with go back to the pool. */
  release(elements: readonly Element[]): void {
    for (const element of elements) this.#spaces.give(element.space);
  }

  /** Everything unsent is dropped, its buffers back to the pool. */
  drop(): void {
    this.release(this.#ready.splice(0));
    if (this.#filling !== undefined) this.release([this.#filling]);
    this.#filling = undefined;
  }

  /** Everything unsent is forgotten, its buffers NOT reused; tells how many elements that was. */
  forget(): number {
    const count = this.#ready.length + (this.#filling === undefined ? 0 : 1);
    this.#ready.length = 0;
    this.#filling = undefined;
    return count;
  }
}
