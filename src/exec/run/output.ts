/**
 * Output alignment: each stream's bytes are cut only after a whole UTF-8 character (an
 * incomplete one waits for that stream's next chunk), then meet the other stream's in whole
 * lines (../line-gate.ts) on their way to the log. Output goes as bytes (the log masks whole
 * lines of bytes); only captured stdout is decoded, up to MAX_CAPTURE_BYTES.
 */
import { createLineGate, type LineGate } from '../line-gate.js';
import type { StartedProcess } from './start.js';

const MAX_CAPTURE_BYTES = 1024 * 1024;

/** A stream's chunks up to the last whole UTF-8 character; the rest waits for its next chunk. */
class CharacterAligned {
  #held: Uint8Array = new Uint8Array(0);

  next(chunk: Uint8Array): Uint8Array {
    const data = this.#held.length === 0 ? chunk : Buffer.concat([this.#held, chunk]);
    const whole = wholeCharacters(data);
    this.#held = data.subarray(whole);
    return whole === data.length ? data : data.subarray(0, whole);
  }

  /** What is held at the stream's end. */
  rest(): Uint8Array {
    const rest = this.#held;
    this.#held = new Uint8Array(0);
    return rest;
  }
}

/** The length of `bytes` without an incomplete UTF-8 character at its end. */
function wholeCharacters(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back] ?? 0;
    // A continuation byte: the character starts further back.
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/** A command's stdout and stderr on their way to `sink`, stdout also captured when asked. */
export class CommandOutput {
  readonly #gate: LineGate;
  readonly #out = new CharacterAligned();
  readonly #err = new CharacterAligned();
  readonly #decoder = new TextDecoder();
  readonly #capture: boolean;
  #captured = '';
  #capturedBytes = 0;

  constructor(
    child: Pick<StartedProcess, 'stdout' | 'stderr'>,
    sink: (bytes: Uint8Array) => void,
    capture: boolean,
  ) {
    this.#gate = createLineGate(sink);
    this.#capture = capture;
    child.stdout?.on('data', (chunk: Uint8Array) => {
      if (this.#capture && this.#capturedBytes < MAX_CAPTURE_BYTES) {
        this.#captured += this.#decoder.decode(chunk, { stream: true });
        this.#capturedBytes += chunk.length;
      }
      this.#gate.write('stdout', this.#out.next(chunk));
    });
    child.stderr?.on('data', (chunk: Uint8Array) => this.#gate.write('stderr', this.#err.next(chunk)));
  }

  /** Both streams have ended: what they held goes on (and no timer is left). */
  flush(): void {
    this.#gate.write('stdout', this.#out.rest());
    this.#gate.write('stderr', this.#err.rest());
    this.#gate.end();
  }

  /** The captured stdout ('' when not captured); read once, after flush. */
  stdout(): string {
    return this.#capture ? this.#captured + this.#decoder.decode() : '';
  }
}
