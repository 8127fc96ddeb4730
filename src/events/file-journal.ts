/**
 * The embedded mode's journal, in the scratch space (`<scratch>/events/`), which survives a restart
 * of the process: per subscription, `<name>.jsonl` (one event per line, appended) and
 * `<name>.state.json` (how many lines are done with; the URL it was disabled at); and
 * `deliveries.jsonl`, each delivery's states appended (the newest one wins when read back).
 */
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
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

/** Steps run one after the other (the writes to one file). */
class Serial {
  #chain: Promise<unknown> = Promise.resolve();

  run<T>(step: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(step, step);
    this.#chain = next.catch(() => undefined);
    return next;
  }
}

/** One subscription's queue: the events of its file, those from `state.done` on pending. */
class Queue {
  lines: CloudEvent[] = [];
  state: QueueState = { done: 0 };
  readonly #writes = new Serial();

  constructor(
    readonly file: string,
    readonly stateFile: string,
  ) {}

  async open(): Promise<void> {
    this.lines = (await readLines(this.file)).flatMap((line) => {
      try {
        return [JSON.parse(line) as CloudEvent];
      } catch {
        return []; // A line cut by a crash mid-write.
      }
    });
    const text = await readFile(this.stateFile, 'utf8').catch(() => '{"done":0}');
    this.state = JSON.parse(text) as QueueState;
    this.state.done = Math.min(this.state.done, this.lines.length);
  }

  async append(event: CloudEvent): Promise<void> {
    await this.#writes.run(() => appendFile(this.file, `${JSON.stringify(event)}\n`));
    this.lines.push(event);
  }

  async saveState(): Promise<void> {
    await this.#writes.run(async () => {
      if (this.state.done === this.lines.length && this.lines.length >= COMPACT_AFTER_LINES) {
        await writeFile(this.file, '');
        this.lines = [];
        this.state.done = 0;
      }
      const tmp = `${this.stateFile}.tmp`;
      await writeFile(tmp, JSON.stringify(this.state));
      await rename(tmp, this.stateFile);
    });
  }
}

export class FileJournal implements EventJournal {
  readonly #dir: string;
  readonly #queues = new Map<string, Queue>();
  readonly #recent = new RecentDeliveries();
  readonly #deliveryWrites = new Serial();
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
    for (const line of lines) journal.#recent.put(JSON.parse(line) as Delivery);
    journal.#deliveryLines = lines.length;
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

  async record(event: CloudEvent, deliveries: readonly Delivery[]): Promise<void> {
    await Promise.all(deliveries.map((d) => this.#queue(d.subscription).append(event)));
    await Promise.all(deliveries.map((d) => this.saveDelivery(d)));
  }

  own(): Promise<boolean> {
    return Promise.resolve(true);
  }

  head(subscription: string): Promise<JournalEntry | undefined> {
    const queue = this.#queue(subscription);
    const event = queue.lines[queue.state.done];
    return Promise.resolve(event === undefined ? undefined : { position: String(queue.state.done), event });
  }

  async done(subscription: string, entry: JournalEntry): Promise<void> {
    const queue = this.#queue(subscription);
    if (String(queue.state.done) !== entry.position) return;
    queue.state.done += 1;
    await queue.saveState();
  }

  pending(subscription: string): Promise<number> {
    const queue = this.#queue(subscription);
    return Promise.resolve(queue.lines.length - queue.state.done);
  }

  async saveDelivery(delivery: Delivery): Promise<void> {
    this.#recent.put(delivery);
    const path = join(this.#dir, 'deliveries.jsonl');
    await this.#deliveryWrites.run(async () => {
      if (this.#deliveryLines >= 2 * RECENT_DELIVERIES) {
        const all = this.#recent.all();
        await writeFile(`${path}.tmp`, all.map((d) => `${JSON.stringify(d)}\n`).join(''));
        await rename(`${path}.tmp`, path);
        this.#deliveryLines = all.length;
        return;
      }
      await appendFile(path, `${JSON.stringify(delivery)}\n`);
      this.#deliveryLines += 1;
    });
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

  async disable(subscription: string, url: string): Promise<void> {
    const queue = this.#queue(subscription);
    queue.state.disabledUrl = url;
    await queue.saveState();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
