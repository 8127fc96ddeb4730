/**
 * Watches one build from the outside, as docs/openapi.yaml describes for CI jobs: polls
 * `GET /builds?requestId=` for its phase and log ids, prints a heading per phase, and follows
 * each step's log (clone, then build) with that step's prefix; while it waits in the queue, its
 * place (`queued: position N`) each time it moves. Once the answer is in, every log
 * it names is read to its end, whether or not it was seen while running (drop nothing).
 */
import { call, jsonOf } from './http.js';
import { LogStream } from './log-stream.js';
import type { Sink } from './output.js';
import { sleep } from './signals.js';

const POLL_MS = 250;
/** How long a log may still stream once the answer is in (it has ended on the server by then). */
const AFTER_ANSWER_MS = 10_000;

/** The step prefix of a log id. */
const stepOf = (logId: string): string => (logId.startsWith('git-') ? 'clone' : 'build');

const HEADINGS: Record<string, string> = {
  cloning: 'cloning',
  resolving: 'reading the dev container definition',
  building: 'building and pushing',
  reusing: 'reused: an image built from the same inputs is tagged, nothing is rebuilt',
};

export class BuildWatch {
  readonly #server: URL;
  readonly #requestId: string;
  readonly #sink: Sink;
  readonly #stop = new AbortController();
  readonly #logs = new Map<string, LogStream>();
  readonly #polling: Promise<void>;
  /** Builds of the same request id not watched (earlier attempts). */
  readonly #skip: ReadonlySet<string>;
  #phase: string | undefined;
  #position: number | undefined;

  constructor(server: URL, requestId: string, sink: Sink, skip: ReadonlySet<string> = new Set()) {
    this.#server = server;
    this.#requestId = requestId;
    this.#sink = sink;
    this.#skip = skip;
    this.#polling = this.#poll();
  }

  /** The stream of a log id, started if it was not. */
  log(id: string): LogStream {
    let stream = this.#logs.get(id);
    if (stream === undefined) {
      stream = new LogStream(this.#server, id, `[${stepOf(id)}] `, this.#sink);
      this.#logs.set(id, stream);
    }
    return stream;
  }

  /** Stops polling; reads the answer's logs to their end; stops every stream after a grace time. */
  async finish(logIds: readonly string[]): Promise<void> {
    this.#stop.abort();
    await this.#polling;
    for (const id of logIds) this.log(id);
    const all = Promise.all([...this.#logs.values()].map((s) => s.done));
    const timer = setTimeout(() => this.cancel(), AFTER_ANSWER_MS);
    await all;
    clearTimeout(timer);
  }

  /** Stops everything now (an interrupt, a 429). */
  cancel(): void {
    this.#stop.abort();
    for (const stream of this.#logs.values()) stream.stop();
  }

  #heading(phase: string): void {
    if (phase === this.#phase || !(phase in HEADINGS)) return;
    this.#phase = phase;
    this.#sink.line(`==> ${HEADINGS[phase]}`);
  }

  /** A queued build's place, printed when it moves. */
  #queued(record: Record<string, unknown>): void {
    const place = (record.queue as { position?: unknown } | undefined)?.position;
    if (record.phase !== 'queued' || typeof place !== 'number' || place === this.#position) return;
    this.#position = place;
    this.#sink.line(`queued: position ${place}`);
  }

  async #poll(): Promise<void> {
    const url = new URL(`builds?requestId=${encodeURIComponent(this.#requestId)}`, this.#server);
    while (!this.#stop.signal.aborted) {
      await sleep(POLL_MS, this.#stop.signal);
      if (this.#stop.signal.aborted) return;
      const answer = await call(url, { signal: this.#stop.signal }).catch(() => undefined);
      const builds = answer && answer.status === 200 ? jsonOf(answer)?.builds : undefined;
      const record = Array.isArray(builds)
        ? (builds as Record<string, unknown>[]).find((b) => !this.#skip.has(String(b.id)))
        : undefined;
      if (record === undefined) continue;
      // A clone done within one poll is never seen as a phase: its log still gets its heading.
      if (typeof record.gitCloneLogId === 'string' && this.#phase === undefined) this.#heading('cloning');
      if (typeof record.phase === 'string') this.#heading(record.phase);
      this.#queued(record);
      if (typeof record.gitCloneLogId === 'string') this.log(record.gitCloneLogId);
      if (typeof record.imageBuildLogId === 'string') this.log(record.imageBuildLogId);
      // The build log followed and its phase known: the streams carry the rest.
      if (['building', 'reusing', 'finished'].includes(String(record.phase))) return;
    }
  }
}
