/**
 * Where a command's stdout and stderr meet in its log: in whole lines. While one stream writes,
 * its output passes as it comes (no copy, no delay). A stream whose output ended inside a line
 * holds the log until that line's newline; what the other stream writes meanwhile waits, and goes
 * right after it. A line left open for HOLD_MS (a prompt, a progress bar) while the other stream
 * waits, or more than WAITING_BYTES_MAX waiting, lets the waiting output go; the open line goes on
 * after it. Never cuts a character: each stream's bytes come whole-character aligned (run.ts),
 * and a newline byte is never inside one.
 */

export type StreamName = 'stdout' | 'stderr';

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

export function createLineGate(sink: (bytes: Uint8Array) => void, holdMs = HOLD_MS): LineGate {
  /** The stream in the middle of a line (its last output did not end with a newline). */
  let owner: StreamName | undefined;
  const waiting: Record<StreamName, Uint8Array[]> = { stdout: [], stderr: [] };
  let waitingBytes = 0;
  let timer: NodeJS.Timeout | undefined;

  const stopTimer = (): void => {
    clearTimeout(timer);
    timer = undefined;
  };
  /** The open line stops holding the log: what waits goes. */
  const open = (): void => {
    stopTimer();
    owner = undefined;
    for (const stream of ['stdout', 'stderr'] as const) drain(stream);
  };
  const drain = (stream: StreamName): void => {
    const queued = waiting[stream].splice(0);
    for (const bytes of queued) {
      waitingBytes -= bytes.length;
      write(stream, bytes);
    }
  };
  /** `stream` may write now. */
  const pass = (stream: StreamName, bytes: Uint8Array): void => {
    const other = otherOf(stream);
    if (waiting[other].length > 0 && bytes[bytes.length - 1] !== NEWLINE) {
      const cut = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).lastIndexOf(NEWLINE);
      if (cut >= 0) {
        // The other stream waits: this one's complete lines, then the other's turn, then the rest.
        pass(stream, bytes.subarray(0, cut + 1));
        write(stream, bytes.subarray(cut + 1));
        return;
      }
    }
    sink(bytes);
    if (bytes[bytes.length - 1] === NEWLINE) {
      stopTimer();
      owner = undefined;
      drain(other);
    } else {
      owner = stream;
      if (waiting[other].length > 0) timer ??= setTimeout(open, holdMs);
    }
  };
  function write(stream: StreamName, bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (owner === undefined || owner === stream) return pass(stream, bytes);
    waiting[stream].push(bytes);
    waitingBytes += bytes.length;
    if (waitingBytes > WAITING_BYTES_MAX) open();
    else timer ??= setTimeout(open, holdMs);
  }
  return {
    write,
    end() {
      stopTimer();
      owner = undefined;
      for (const stream of ['stdout', 'stderr'] as const)
        for (const bytes of waiting[stream].splice(0)) sink(bytes);
      waitingBytes = 0;
    },
  };
}
