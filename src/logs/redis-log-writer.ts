/**
 * The writing side of a Redis command log (docs/redis.md, How a log is written): masked bytes in list
 * elements, full ones streamed, a part-filled one sent once nothing is in flight, the last with the
 * close. After a failed append the list's length tells what was stored (one writer per log), so
 * output is stored once and in order. The size cap is counted here. States: WriterPhase, WriterFlow.
 */
import type { RedisClient } from '../redis/connection.js';
import { reasonOf } from '../errors/errors.js';
import { createLineMasker, type LineMasker } from '../secrets/line-masker.js';
import { appendElement, closeLog } from './redis-log-commands.js';
import {
  bytesOf,
  ElementQueue,
  MAX_IN_FLIGHT,
  type Element,
  type ElementSpaces,
} from './redis-log-elements.js';
import { textKey, TRUNCATED_MARKER } from '../redis/keys.js';
import type { LogKind } from './types.js';

export { createElementSpaces, type ElementSpaces } from './redis-log-elements.js';

/** An open log's expiry is pushed back with an append at most this often (it is a day long). */
const TTL_REFRESH_MS = 60_000;
/** After close, unsent output is retried this long while Redis is unreachable, then dropped (logged). */
const CLOSE_FLUSH_DEADLINE_MS = 10_000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 1000;

const TRUNCATED_BYTES = Buffer.from(TRUNCATED_MARKER);

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface RedisLogWriterOptions {
  /** The connection for appends (fails fast while Redis is unreachable). */
  readonly client: RedisClient;
  /** An open log: its keys were made by the store's open(). */
  readonly id: string;
  readonly kind: LogKind;
  /** Every secret to mask (the server's own and the request's). */
  readonly secrets: readonly string[];
  readonly sizeCapBytes: number;
  /** Closed logs kept per kind. */
  readonly retention: number;
  /** Milliseconds since the epoch (close time). */
  readonly now: () => number;
  /** Where elements are built (the store's one pool). */
  readonly spaces: ElementSpaces;
  /** Output that could not be stored (Redis stayed unreachable): said once, by the caller's logger. */
  readonly warn: (fields: Record<string, unknown>, message: string) => void;
}

/**
 * | phase   | what is sent                                           | left when             |
 * |---------|--------------------------------------------------------|-----------------------|
 * | open    | full elements, MAX_IN_FLIGHT unanswered; a part-filled | close(): closing; an  |
 * |         | one when nothing is in flight                          | append finds no log   |
 * | closing | every element but the last: it goes with the close     | closed; as open       |
 * | closed  | nothing: the close ran (or gave up), output is dropped | (final)               |
 * | gone    | nothing: the log was deleted meanwhile, output dropped | (final)               |
 */
export type WriterPhase = 'open' | 'closing' | 'closed' | 'gone';
/**
 * | flow        | appends                                                                |
 * |-------------|------------------------------------------------------------------------|
 * | streaming   | go as the phase allows                                                 |
 * | settling    | one failed: none is sent until every append in flight is answered      |
 * | reconciling | the list's length tells which were stored; the others are queued again |
 */
export type WriterFlow = 'streaming' | 'settling' | 'reconciling';

/** An append sent: its element (kept until it is known to be stored) and what became of it. */
interface Sent {
  readonly element: Element;
  state: 'sending' | 'stored' | 'failed';
}

/** The writing side of one log; `close` never throws. */
export class RedisLogWriter {
  readonly #options: RedisLogWriterOptions;
  readonly #masker: LineMasker;
  readonly #elements: ElementQueue;
  /** Appends sent and not yet known stored, in the order sent (one connection: Redis runs them so). */
  readonly #sent: Sent[] = [];
  /** List elements known to be stored (the empty first one, then each stored append's). */
  #stored = 1;
  #acceptedBytes = 0;
  /** The size cap was reached: the marker was written, later output is dropped. */
  #truncated = false;
  #phase: WriterPhase = 'open';
  #flow: WriterFlow = 'streaming';
  /** A part-filled element is to go on the next turn of the event loop. */
  #partialSoon = false;
  /** The open log's expiry was last pushed back then (by open(), just before). */
  #ttlRefreshedAt = Date.now();
  #giveUpAt = Number.POSITIVE_INFINITY;
  #closed: Promise<void> | undefined;
  readonly #waiters = new Set<() => void>();

  constructor(options: RedisLogWriterOptions) {
    this.#options = options;
    this.#masker = createLineMasker(options.secrets);
    this.#elements = new ElementQueue(options.spaces);
  }

  /** Where the writer is (tests and diagnostics). */
  get state(): { readonly phase: WriterPhase; readonly flow: WriterFlow } {
    return { phase: this.#phase, flow: this.#flow };
  }

  write(chunk: string | Uint8Array): void {
    for (const lines of this.#masker.push(chunk)) this.#accept(lines);
  }

  addSecrets(secrets: readonly string[]): void {
    this.#masker.addSecrets(secrets);
  }

  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  #accept(masked: Buffer): void {
    if (masked.length === 0 || this.#truncated || this.#phase === 'gone' || this.#phase === 'closed') return;
    if (this.#acceptedBytes + masked.length > this.#options.sizeCapBytes) {
      this.#truncated = true;
      this.#elements.fill(TRUNCATED_BYTES);
    } else {
      this.#acceptedBytes += masked.length;
      this.#elements.fill(masked);
    }
    if (this.#phase === 'open') this.#pump();
  }

  /**
   * Sends what may go now: full elements while fewer than MAX_IN_FLIGHT are unanswered (a fast
   * writer's output streams without waiting for each answer); a part-filled one only when nothing
   * is in flight, on the next turn of the event loop (the writes of this turn go with it). While
   * closing, every element but the last, which goes with the close.
   */
  #pump(): void {
    if (this.#phase === 'gone' || this.#phase === 'closed' || this.#flow !== 'streaming') return;
    const keep = this.#phase === 'closing' ? 1 : 0;
    while (this.#sent.length < MAX_IN_FLIGHT && this.#elements.ready > keep)
      this.#send(this.#elements.next());
    if (this.#phase === 'open' && this.#sent.length === 0 && this.#elements.filling) this.#sendPartialSoon();
  }

  #sendPartialSoon(): void {
    if (this.#partialSoon) return;
    this.#partialSoon = true;
    setImmediate(() => {
      this.#partialSoon = false;
      if (this.#phase !== 'open' || this.#flow !== 'streaming' || this.#sent.length > 0) return;
      this.#elements.seal();
      this.#pump();
    });
  }

  #send(element: Element): void {
    const entry: Sent = { element, state: 'sending' };
    this.#sent.push(entry);
    const now = Date.now();
    const refreshTtl = now - this.#ttlRefreshedAt >= TTL_REFRESH_MS;
    if (refreshTtl) this.#ttlRefreshedAt = now;
    void appendElement(this.#options.client, this.#options.id, element, refreshTtl)
      .then(
        (exists) => {
          entry.state = 'stored';
          if (!exists) this.#phase = 'gone';
        },
        () => {
          entry.state = 'failed';
        },
      )
      .finally(() => this.#settled());
  }

  /** An append was answered (or failed): the stored ones are done; a failure stops the flow. */
  #settled(): void {
    while (this.#sent[0]?.state === 'stored') {
      this.#elements.release([(this.#sent.shift() as Sent).element]);
      this.#stored += 1;
    }
    if (this.#phase === 'gone') this.#elements.drop();
    if (this.#flow === 'streaming' && this.#sent.some((entry) => entry.state === 'failed'))
      this.#flow = 'settling';
    if (this.#flow === 'settling' && this.#sent.every((entry) => entry.state !== 'sending')) {
      this.#flow = 'reconciling';
      void this.#reconcile();
    } else this.#pump();
    this.#wake();
  }

  /**
   * After a failed append (Redis unreachable, or an answer lost with its connection), once every
   * append in flight is settled: the list's length tells which were stored. Retried with backoff;
   * after close, gives up at its deadline (said once).
   */
  async #reconcile(): Promise<void> {
    for (let delay = RETRY_MIN_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      if (Date.now() >= this.#giveUpAt) {
        this.#giveUp();
        break;
      }
      await wait(delay);
      const length = await this.#options.client.llen(textKey(this.#options.id)).catch(() => undefined);
      if (length === undefined) continue;
      this.#resume(length);
      break;
    }
    this.#flow = 'streaming';
    this.#pump();
    this.#wake();
  }

  /** The list holds `length` elements: the appends beyond those go back to the front of the queue. */
  #resume(length: number): void {
    const entries = this.#sent.splice(0);
    if (length === 0) {
      // Deleted (or expired) meanwhile.
      this.#phase = 'gone';
      this.#elements.release(entries.map((entry) => entry.element));
      this.#elements.drop();
      return;
    }
    const landed = length - this.#stored;
    this.#elements.release(entries.slice(0, landed).map((entry) => entry.element));
    this.#elements.requeue(entries.slice(landed).map((entry) => entry.element));
    this.#stored = length;
  }

  #giveUp(): void {
    // Not reused: an append that timed out may still be waiting in the connection's buffer.
    const dropped = this.#sent.splice(0).length + this.#elements.forget();
    this.#options.warn(
      { logId: this.#options.id, droppedElements: dropped },
      'command log output lost: the shared store (Redis) stayed unreachable',
    );
  }

  async #close(): Promise<void> {
    if (this.#phase === 'open') this.#phase = 'closing';
    this.#giveUpAt = Date.now() + CLOSE_FLUSH_DEADLINE_MS;
    for (const rest of this.#masker.end()) this.#accept(rest);
    this.#elements.seal();
    this.#pump();
    // Appends in flight are answered first (order); all but the last element go as appends.
    while (
      this.#phase !== 'gone' &&
      (this.#sent.length > 0 || this.#flow !== 'streaming' || this.#elements.ready > 1)
    )
      await this.#changed();
    if (this.#phase === 'gone') return;
    const last = this.#elements.takeReady();
    try {
      await this.#runClose(last.map(bytesOf));
    } finally {
      this.#elements.release(last);
      this.#phase = 'closed';
    }
  }

  /** The close script, retried until it ran or the deadline passed (said once). */
  async #runClose(tail: readonly Buffer[]): Promise<void> {
    const { client, id, kind, retention } = this.#options;
    for (;;) {
      try {
        await closeLog(client, { id, kind, retention, now: this.#options.now() }, tail);
        return;
      } catch (err) {
        if (Date.now() >= this.#giveUpAt) {
          this.#options.warn(
            { logId: id, droppedElements: tail.length, problem: reasonOf(err) },
            'command log left open: the shared store (Redis) stayed unreachable',
          );
          return;
        }
        await wait(RETRY_MAX_MS);
      }
    }
  }

  #wake(): void {
    for (const resolve of this.#waiters) resolve();
    this.#waiters.clear();
  }

  #changed(): Promise<void> {
    return new Promise((resolve) => this.#waiters.add(resolve));
  }
}

export function openRedisLogWriter(options: RedisLogWriterOptions): RedisLogWriter {
  return new RedisLogWriter(options);
}
