/**
 * Where a command's stdout and stderr meet in its log: in whole lines (docs/behaviour.md, Command
 * logs). While one stream writes, its output passes as it comes (no copy, no delay). A stream that
 * ended inside a line holds the log until that newline; the other's output waits, then goes right
 * after it. An open line (a prompt) lets waiting output go after HOLD_MS or WAITING_BYTES_MAX, and
 * goes on after it. Never cuts a character: streams come whole-character aligned (run/output.ts).
 */

type StreamName = 'stdout' | 'stderr';

/** How long an open line holds the log while the other stream has output waiting. */
const HOLD_MS = 500;
/** How much output may wait for an open line. */
const WAITING_BYTES_MAX = 1024 * 1024;
const NEWLINE = 0x0a;

export interface LineGate {
  write(stream: StreamName, bytes: Uint8Array): void;
  /** Both streams have ended: everything waiting goes, and no timer is left. */
  end(): void;
}

const otherOf = (stream: StreamName): StreamName => (stream === 'stdout' ? 'stderr' : 'stdout');
const endsLine = (bytes: Uint8Array): boolean => bytes[bytes.length - 1] === NEWLINE;

export function createLineGate(sink: (bytes: Uint8Array) => void, holdMs = HOLD_MS): LineGate {
  return new Gate(sink, holdMs);
}

class Gate implements LineGate {
  /** The stream in the middle of a line (its last output did not end with a newline), if any. */
  #owner: StreamName | undefined;
  readonly #waiting: Record<StreamName, Uint8Array[]> = { stdout: [], stderr: [] };
  #waitingBytes = 0;
  /** Runs while an open line holds the log and the other stream's output waits. */
  #timer: NodeJS.Timeout | undefined;
  readonly #sink: (bytes: Uint8Array) => void;
  readonly #holdMs: number;

  constructor(sink: (bytes: Uint8Array) => void, holdMs: number) {
    this.#sink = sink;
    this.#holdMs = holdMs;
  }

  write(stream: StreamName, bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.#owner === undefined || this.#owner === stream) return this.#pass(stream, bytes);
    this.#waiting[stream].push(bytes);
    this.#waitingBytes += bytes.length;
    if (this.#waitingBytes > WAITING_BYTES_MAX) this.#open();
    else this.#holdFor();
  }

  end(): void {
    this.#release();
    for (const stream of ['stdout', 'stderr'] as const)
      for (const bytes of this.#waiting[stream].splice(0)) this.#sink(bytes);
    this.#waitingBytes = 0;
  }

  /** `stream` may write now. */
  #pass(stream: StreamName, bytes: Uint8Array): void {
    const other = otherOf(stream);
    if (this.#waiting[other].length > 0 && !endsLine(bytes)) {
      const cut = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).lastIndexOf(NEWLINE);
      if (cut >= 0) {
        // The other stream waits: this one's complete lines, then the other's turn, then the rest.
        this.#pass(stream, bytes.subarray(0, cut + 1));
        this.write(stream, bytes.subarray(cut + 1));
        return;
      }
    }
    this.#sink(bytes);
    if (endsLine(bytes)) {
      this.#release();
      this.#drain(other);
    } else {
      this.#owner = stream;
      if (this.#waiting[other].length > 0) this.#holdFor();
    }
  }

  /** The open line holds the log for at most holdMs from the first output waiting. */
  #holdFor(): void {
    this.#timer ??= setTimeout(() => this.#open(), this.#holdMs);
  }

  /** No line is open any more. */
  #release(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#owner = undefined;
  }

  /** The open line stops holding the log: what waits goes. */
  #open(): void {
    this.#release();
    for (const stream of ['stdout', 'stderr'] as const) this.#drain(stream);
  }

  #drain(stream: StreamName): void {
    for (const bytes of this.#waiting[stream].splice(0)) {
      this.#waitingBytes -= bytes.length;
      this.write(stream, bytes);
    }
  }
}
