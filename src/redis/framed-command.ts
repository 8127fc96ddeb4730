/**
 * A command whose large last argument already lies in the caller's buffer, with room kept before and
 * after it: its RESP frame (the bytes ioredis itself sends; a unit test compares them) is written
 * around it in place, and ioredis writes that one view as it is. Why: ioredis copies every Buffer
 * argument, which cost a third of log-capture throughput (docs/benchmarks.md, bench:redis). ioredis
 * still owns the connection, its queue and the reply.
 */
import { Command } from 'ioredis';

/** Bytes kept free before the argument for the command's header (name, leading arguments, length). */
export const FRAME_HEAD_ROOM = 256;
/** Bytes kept free after the argument for its end of line. */
export const FRAME_TAIL_ROOM = 2;

class FramedCommand extends Command {
  readonly #frame: Buffer;

  constructor(name: string, leading: readonly string[], frame: Buffer) {
    // Its bytes are the frame; the leading arguments (its key) tell a cluster client its slot.
    super(name, [...leading]);
    this.#frame = frame;
  }

  override toWritable(): Buffer {
    return this.#frame;
  }
}

const bulk = (text: string): string => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

/**
 * `name leading... <the argument>`, where the argument is `space[FRAME_HEAD_ROOM, FRAME_HEAD_ROOM +
 * length)`. Writes the header just before it and the end of line just after it: `space` must not
 * change until the command is answered (or has failed). Send it with `client.sendCommand()`; its
 * `promise` is the reply.
 */
export function framedCommand(
  name: string,
  leading: readonly string[],
  space: Buffer,
  length: number,
): Command {
  const header = Buffer.from(
    `*${leading.length + 2}\r\n${bulk(name)}${leading.map(bulk).join('')}$${length}\r\n`,
  );
  if (header.length > FRAME_HEAD_ROOM || FRAME_HEAD_ROOM + length + FRAME_TAIL_ROOM > space.length)
    throw new RangeError('framed command: no room for the header or the argument');
  const start = FRAME_HEAD_ROOM - header.length;
  header.copy(space, start);
  space.write('\r\n', FRAME_HEAD_ROOM + length, 'latin1');
  return new FramedCommand(name, leading, space.subarray(start, FRAME_HEAD_ROOM + length + FRAME_TAIL_ROOM));
}
