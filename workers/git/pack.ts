/**
 * A git pack read in memory (pure): the objects of a small pack (a commit and its trees), deltas
 * applied, each under its object id. What http-trees.ts reads a tree-only fetch with, so the commit's
 * trees are listed without a clone; anything it does not understand is undefined (git then clones).
 */
import { createHash } from 'node:crypto';
import { inflateSync } from 'node:zlib';

export interface PackObject {
  readonly type: 'commit' | 'tree' | 'blob' | 'tag';
  readonly data: Buffer;
}

const TYPES = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' } as const;
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** The largest object, inflated or built from a delta, that is read (a tree of ~500k entries). */
const MAX_OBJECT_BYTES = 32 * 1024 * 1024;
/** What the entries of one pack may inflate to in all: a small pack cannot become a huge one. */
const MAX_INFLATED_BYTES = 128 * 1024 * 1024;

/** Thrown inside the reader for anything unreadable; the reader answers undefined. */
class Unreadable extends Error {}

const objectId = (type: string, data: Buffer): string =>
  createHash('sha1').update(`${type} ${data.length}\0`).update(data).digest('hex');

/** A delta's size header (little-endian base-128) at `at`: the value and where it ends. */
function deltaSize(delta: Buffer, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  let byte: number;
  do {
    byte = delta[at++] ?? 0;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, at];
}

/** `base` with `delta` applied (git's copy and insert instructions). */
function applyDelta(base: Buffer, delta: Buffer): Buffer {
  let [size, at] = deltaSize(delta, 0);
  if (size !== base.length) throw new Unreadable('delta base size');
  [size, at] = deltaSize(delta, at);
  if (size > MAX_OBJECT_BYTES) throw new Unreadable('delta result size');
  const out = Buffer.alloc(size);
  let written = 0;
  while (at < delta.length) {
    const op = delta[at++] ?? 0;
    if (op & 0x80) {
      let offset = 0;
      let length = 0;
      for (let bit = 0; bit < 4; bit++) if (op & (1 << bit)) offset |= (delta[at++] ?? 0) << (8 * bit);
      for (let bit = 0; bit < 3; bit++) if (op & (16 << bit)) length |= (delta[at++] ?? 0) << (8 * bit);
      if (length === 0) length = 0x10000;
      offset >>>= 0;
      if (offset + length > base.length || written + length > size) throw new Unreadable('delta copy');
      written += base.copy(out, written, offset, offset + length);
    } else if (op > 0) {
      if (at + op > delta.length || written + op > size) throw new Unreadable('delta insert');
      written += delta.copy(out, written, at, at + op);
      at += op;
    } else throw new Unreadable('delta opcode 0');
  }
  if (written !== size) throw new Unreadable('delta result size');
  return out;
}

/** One entry as stored: its type, where its data starts, and its delta base if any. */
interface Stored {
  readonly kind: number;
  readonly data: Buffer;
  readonly baseOffset?: number;
  readonly baseId?: string;
}

/** The entry header at `at`: its kind, inflated size, and where the rest begins. */
function entryHeader(pack: Buffer, at: number): { kind: number; size: number; at: number } {
  let byte = pack[at++] ?? 0;
  const kind = (byte >> 4) & 7;
  let size = byte & 0x0f;
  let shift = 4;
  while (byte & 0x80) {
    byte = pack[at++] ?? 0;
    size += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  }
  return { kind, size, at };
}

/** Inflates the zlib stream at `at`: its bytes and where the next entry begins. */
function inflateAt(pack: Buffer, at: number, size: number): [Buffer, number] {
  if (size > MAX_OBJECT_BYTES) throw new Unreadable('object size');
  // Never more than the size the entry declares: a zlib stream cannot inflate beyond it.
  const options = { info: true, maxOutputLength: Math.max(size, 1) };
  const { buffer, engine } = inflateSync(pack.subarray(at), options) as unknown as {
    buffer: Buffer;
    engine: { bytesWritten: number };
  };
  if (buffer.length !== size) throw new Unreadable('inflated size');
  return [buffer, at + engine.bytesWritten];
}

/** Every entry of the pack by offset, as stored (deltas not yet applied). */
function readEntries(pack: Buffer): Map<number, Stored> {
  if (pack.length < 32 || pack.toString('latin1', 0, 4) !== 'PACK') throw new Unreadable('signature');
  const version = pack.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new Unreadable('version');
  const count = pack.readUInt32BE(8);
  const trailer = pack.length - 20;
  if (createHash('sha1').update(pack.subarray(0, trailer)).digest().compare(pack.subarray(trailer)) !== 0)
    throw new Unreadable('checksum');
  const entries = new Map<number, Stored>();
  let at = 12;
  let inflated = 0;
  for (let i = 0; i < count; i++) {
    const offset = at;
    const header = entryHeader(pack, at);
    at = header.at;
    let base: Pick<Stored, 'baseOffset' | 'baseId'> = {};
    if (header.kind === OFS_DELTA) {
      let byte = pack[at++] ?? 0;
      let back = byte & 0x7f;
      while (byte & 0x80) {
        byte = pack[at++] ?? 0;
        back = (back + 1) * 128 + (byte & 0x7f);
      }
      base = { baseOffset: offset - back };
    } else if (header.kind === REF_DELTA) {
      base = { baseId: pack.toString('hex', at, at + 20) };
      at += 20;
    } else if (!(header.kind in TYPES)) throw new Unreadable('object type');
    inflated += header.size;
    if (inflated > MAX_INFLATED_BYTES) throw new Unreadable('inflated total');
    const [data, next] = inflateAt(pack, at, header.size);
    at = next;
    if (at > trailer) throw new Unreadable('truncated');
    entries.set(offset, { kind: header.kind, data, ...base });
  }
  return entries;
}

/** The objects of `pack` by object id (SHA-1), deltas applied; undefined when it cannot be read. */
export function readPack(pack: Buffer): Map<string, PackObject> | undefined {
  try {
    const entries = readEntries(pack);
    const objects = new Map<string, PackObject>();
    const byOffset = new Map<number, PackObject>();
    let built = 0;
    const resolve = (offset: number, depth: number): PackObject => {
      const known = byOffset.get(offset);
      if (known !== undefined) return known;
      const stored = entries.get(offset);
      if (stored === undefined || depth > 1000) throw new Unreadable('delta base');
      let object: PackObject;
      if (stored.baseOffset === undefined && stored.baseId === undefined) {
        object = { type: TYPES[stored.kind as keyof typeof TYPES], data: stored.data };
      } else {
        const base =
          stored.baseOffset !== undefined
            ? resolve(stored.baseOffset, depth + 1)
            : (objects.get(stored.baseId ?? '') ?? resolveId(stored.baseId ?? '', depth + 1));
        object = { type: base.type, data: applyDelta(base.data, stored.data) };
        built += object.data.length;
        if (built > MAX_INFLATED_BYTES) throw new Unreadable('delta results total');
      }
      byOffset.set(offset, object);
      objects.set(objectId(object.type, object.data), object);
      return object;
    };
    const resolveId = (id: string, depth: number): PackObject => {
      // A base named by id: resolve entries until it appears (packs are small here).
      for (const offset of entries.keys()) {
        resolve(offset, depth);
        const found = objects.get(id);
        if (found !== undefined) return found;
      }
      throw new Unreadable('ref delta base');
    };
    for (const offset of entries.keys()) resolve(offset, 0);
    return objects;
  } catch (err) {
    if (
      err instanceof Unreadable ||
      err instanceof RangeError ||
      (err as { code?: string }).code?.startsWith('Z_')
    )
      return undefined;
    throw err;
  }
}
