/**
 * The embedded mode's journal, in the scratch space (`<scratch>/events/`), which survives a restart
 * of the process: per subscription, `<name>.jsonl` (one event per line, appended) and
 * `<name>.state.json` (how many lines are done with; the URL it was disabled at); and
 * `deliveries.jsonl`, each delivery's states appended (the newest one wins when read back).
 */
import {
  appendFileSync,
  closeSync,
  ftruncateSync,
  openSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RecentDeliveries, RECENT_DELIVERIES } from './recent-deliveries.js';
import type { CloudEvent, Delivery, DeliveryFilter, EventJournal, JournalEntry } from './types.js';

/** A queue file whose every line is done with is emptied once it holds this many. */
const COMPACT_AFTER_LINES = 1000;

interface QueueState {
  done: number;
  disabledUrl?: string;
}

async function readLines(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  return text.split('\n').filter((line) => line.trim() !== '');
}

/** A line's value, or none for a line cut by a crash mid-write. */
function parsed<T>(line: string): T[] {
  try {
    return [JSON.parse(line) as T];
  } catch {
    return [];
  }
}

/**
 * One subscription's queue: the events of its file, those from `state.done` on pending. Every write
 * is one small synchronous call (a build's answer waits on the append: no thread-pool round trip
 * under load), so no two writes of a file ever interleave.
 */
class Queue {
  lines: CloudEvent[] = [];
  state: QueueState = { done: 0 };
  #fd = -1;

  constructor(
    readonly file: string,
    readonly stateFile: string,
  ) {}

  async open(): Promise<void> {
    this.lines = (await readLines(this.file)).flatMap(parsed<CloudEvent>);
    const text = await readFile(this.stateFile, 'utf8').catch(() => '{"done":0}');
    this.state = JSON.parse(text) as QueueState;
    this.state.done = Math.min(this.state.done, this.lines.length);
    this.#fd = openSync(this.file, 'a', 0o600);
  }

  /** A queue started now, its file (if any) left as it is. */
  openEmpty(): void {
    this.#fd = openSync(this.file, 'a', 0o600);
  }

  append(event: CloudEvent): void {
    writeSync(this.#fd, `${JSON.stringify(event)}\n`);
    this.lines.push(event);
  }

  saveState(): void {
    if (this.state.done === this.lines.length && this.lines.length >= COMPACT_AFTER_LINES) {
      ftruncateSync(this.#fd, 0);
      this.lines = [];
      this.state.done = 0;
    }
    writeFileSync(`${this.stateFile}.tmp`, JSON.stringify(this.state));
    renameSync(`${this.stateFile}.tmp`, this.stateFile);
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }
}

export class FileJournal implements EventJournal {
  readonly #dir: string;
  readonly #queues = new Map<string, Queue>();
  readonly #recent = new RecentDeliveries();
  #deliveryLines = 0;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  static async open(dir: string, subscriptions: readonly string[]): Promise<FileJournal> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const journal = new FileJournal(dir);
    for (const name of subscriptions) {
      const queue = new Queue(join(dir, `${name}.jsonl`), join(dir, `${name}.state.json`));
      await queue.open();
      journal.#queues.set(name, queue);
    }
    const lines = await readLines(join(dir, 'deliveries.jsonl'));
    for (const delivery of lines.flatMap(parsed<Delivery>)) journal.#recent.put(delivery);
    journal.#deliveryLines = lines.length;
    for (const [name, queue] of journal.#queues) {
      for (const event of queue.lines.slice(queue.state.done)) {
        if (journal.#recent.get(name, event.id) !== undefined) continue;
        journal.#recent.put({
          id: event.id,
          subscription: name,
          type: event.type,
          status: 'pending',
          attempts: 0,
          recordedAt: event.time,
        });
      }
    }
    return journal;
  }

  #queue(subscription: string): Queue {
    // Every subscription's queue is opened at start-up; another name starts an empty one.
    let queue = this.#queues.get(subscription);
    if (queue === undefined) {
      queue = new Queue(
        join(this.#dir, `${subscription}.jsonl`),
        join(this.#dir, `${subscription}.state.json`),
      );
      this.#queues.set(subscription, queue);
    }
    return queue;
  }

  /** The event in each queue file; the pending deliveries in memory only (rebuilt from the queues on open). */
  record(event: CloudEvent, deliveries: readonly Delivery[]): Promise<void> {
    for (const delivery of deliveries) {
      this.#queue(delivery.subscription).append(event);
      this.#recent.put(delivery);
    }
    return Promise.resolve();
  }

  own(): Promise<boolean> {
    return Promise.resolve(true);
  }

  head(subscription: string): Promise<JournalEntry | undefined> {
    const queue = this.#queue(subscription);
    const event = queue.lines[queue.state.done];
    return Promise.resolve(event === undefined ? undefined : { position: String(queue.state.done), event });
  }

  done(subscription: string, entry: JournalEntry): Promise<void> {
    const queue = this.#queue(subscription);
    if (String(queue.state.done) === entry.position) {
      queue.state.done += 1;
      queue.saveState();
    }
    return Promise.resolve();
  }

  pending(subscription: string): Promise<number> {
    const queue = this.#queue(subscription);
    return Promise.resolve(queue.lines.length - queue.state.done);
  }

  saveDelivery(delivery: Delivery): Promise<void> {
    this.#recent.put(delivery);
    const path = join(this.#dir, 'deliveries.jsonl');
    if (this.#deliveryLines >= 2 * RECENT_DELIVERIES) {
      // Rewritten with the newest state of each kept delivery.
      const all = this.#recent.all();
      writeFileSync(`${path}.tmp`, all.map((d) => `${JSON.stringify(d)}\n`).join(''));
      renameSync(`${path}.tmp`, path);
      this.#deliveryLines = all.length;
    } else {
      appendFileSync(path, `${JSON.stringify(delivery)}\n`);
      this.#deliveryLines += 1;
    }
    return Promise.resolve();
  }

  delivery(subscription: string, id: string): Promise<Delivery | undefined> {
    return Promise.resolve(this.#recent.get(subscription, id));
  }

  deliveries(filter: DeliveryFilter): Promise<Delivery[]> {
    return Promise.resolve(this.#recent.list(filter));
  }

  disabledAt(subscription: string): Promise<string | undefined> {
    return Promise.resolve(this.#queue(subscription).state.disabledUrl);
  }

  disable(subscription: string, url: string): Promise<void> {
    const queue = this.#queue(subscription);
    queue.state.disabledUrl = url;
    queue.saveState();
    return Promise.resolve();
  }

  close(): Promise<void> {
    for (const queue of this.#queues.values()) queue.close();
    return Promise.resolve();
  }
}
