/**
 * Follows one captured log (`GET /logs/{id}?follow=true`) to its end and prints it line by line
 * with the step's prefix. The stream is read as fast as it comes (the sink queues locally, so a
 * slow terminal holds nothing up on the server); a broken connection is reopened and the bytes
 * already printed are skipped (the server streams from the start). The last lines are kept for
 * a failure's tail.
 */
import { StringDecoder } from 'node:string_decoder';
import { Unreachable, open, readText, answerReason, sendsToken, type Answer } from './http.js';
import { isRefusal, refusalOf } from './identity.js';
import type { Sink } from './output.js';

const TAIL_LINES = 30;
const RECONNECT_MS = 500;

export class LogStream {
  readonly id: string;
  /** Resolves once the log ended (or was stopped). */
  readonly done: Promise<void>;
  readonly #url: URL;
  readonly #prefix: string;
  readonly #sink: Sink;
  readonly #notices: Sink;
  readonly #stop = new AbortController();
  readonly #decoder = new StringDecoder('utf8');
  readonly #tail: string[] = [];
  #received = 0;
  #partial = '';
  #refused: Answer | undefined;

  /** The log's lines go to `sink`; what ibs says about the stream to `notices`. */
  constructor(server: URL, id: string, prefix: string, sink: Sink, notices: Sink = sink) {
    this.id = id;
    this.#url = new URL(`logs/${encodeURIComponent(id)}?follow=true`, server);
    this.#prefix = prefix;
    this.#sink = sink;
    this.#notices = notices;
    this.done = this.#run();
  }

  /** The last TAIL_LINES lines printed. */
  get tail(): readonly string[] {
    return this.#tail;
  }

  /** The answer other than 200 that ended the stream (a 404, a 401 or 403), if one did. */
  get refused(): Answer | undefined {
    return this.#refused;
  }

  stop(): void {
    this.#stop.abort();
  }

  async #run(): Promise<void> {
    let announced = false;
    while (!this.#stop.signal.aborted) {
      try {
        if (await this.#once()) break;
      } catch (err) {
        if (this.#stop.signal.aborted) break;
        if (!(err instanceof Unreachable)) throw err;
        if (!announced) this.#notices.line(`ibs: ${err.message}; reconnecting to log ${this.id}`);
        announced = true;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    }
    this.#emit(this.#decoder.end(), true);
  }

  /** One connection: true when the log was read to its end (or is gone). */
  async #once(): Promise<boolean> {
    const res = await open(this.#url, { signal: this.#stop.signal });
    if (res.statusCode !== 200) {
      const answer = { status: res.statusCode ?? 0, headers: res.headers, text: await readText(res) };
      this.#refused = answer;
      this.#notices.line(
        `ibs: ${
          isRefusal(answer.status)
            ? refusalOf(`GET /logs/${this.id}`, answer, sendsToken(this.#url))
            : `log ${this.id} answered ${answer.status}: ${answerReason(answer)}`
        }`,
      );
      return true;
    }
    let skip = this.#received;
    try {
      for await (const chunk of res) {
        let data = chunk as Buffer;
        if (skip > 0) {
          const dropped = Math.min(skip, data.length);
          skip -= dropped;
          data = data.subarray(dropped);
        }
        this.#received += data.length;
        this.#emit(this.#decoder.write(data), false);
      }
    } catch (err) {
      if (this.#stop.signal.aborted) return true;
      throw new Unreachable(`the log stream broke: ${(err as Error).message}`, true);
    }
    return true;
  }

  #emit(text: string, last: boolean): void {
    const lines = (this.#partial + text).split('\n');
    this.#partial = last ? '' : (lines.pop() ?? '');
    if (last && lines.at(-1) === '') lines.pop();
    if (lines.length === 0) return;
    this.#sink.write(lines.map((line) => `${this.#prefix}${line}\n`).join(''));
    this.#tail.push(...lines);
    this.#tail.splice(0, Math.max(0, this.#tail.length - TAIL_LINES));
  }
}
