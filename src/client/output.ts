/**
 * stdout and stderr without stalls: Node writes to a pipe synchronously on Linux, so a slow
 * terminal or CI log reader would stop the event loop, and with it the reading of the server's
 * log stream. Here each stream keeps its own queue and writes it from libuv's thread pool
 * (fs.write), so the loop keeps reading the network; nothing is dropped. Every text goes
 * through the masker first.
 */
import { write } from 'node:fs';

const writeOnce = (fd: number, data: Buffer): Promise<number> =>
  new Promise((resolve, reject) => {
    write(fd, data, (err, written) => (err ? reject(err) : resolve(written)));
  });

/** One output stream (fd 1 or 2) with an unbounded queue of masked text. */
export class Sink {
  readonly #fd: number;
  readonly #mask: (text: string) => string;
  #queue: Buffer[] = [];
  #draining: Promise<void> | undefined;

  constructor(fd: number, mask: (text: string) => string) {
    this.#fd = fd;
    this.#mask = mask;
  }

  /** Queues `text` (masked); returns at once. */
  write(text: string): void {
    if (text === '') return;
    this.#queue.push(Buffer.from(this.#mask(text), 'utf8'));
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
    });
  }

  line(text: string): void {
    this.write(`${text}\n`);
  }

  /** Resolves once everything queued so far is written. */
  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      let data = Buffer.concat(this.#queue.splice(0));
      while (data.length > 0) {
        try {
          data = data.subarray(await writeOnce(this.#fd, data));
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          // A non-blocking descriptor that is full: try again shortly. A closed reader: stop.
          if (code !== 'EAGAIN') return void (this.#queue = []);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    }
  }
}

export interface Terminal {
  readonly out: Sink;
  readonly err: Sink;
  /** The masker of both streams, for what ibs writes elsewhere (GITHUB_OUTPUT). */
  readonly mask: (text: string) => string;
}

export const terminal = (mask: (text: string) => string): Terminal => ({
  out: new Sink(1, mask),
  err: new Sink(2, mask),
  mask,
});
