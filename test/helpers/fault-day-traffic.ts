/**
 * The requests of a day of faults (test/helpers/fault-day.ts): async, sync and ibs builds, reuses
 * and real builds, sent to the live replicas in turn and long-polled to their end (polls cut while
 * `cutting`). Each request is kept as it is sent, answered and ended, for the count.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BuildRecord } from '../../src/builds/types.js';
import { httpsCreds, ownDockerfileRepo, stack, uniqueName } from './build-support.js';
import { runIbs, ibsBuildArgs } from './ibs-process.js';
import { listBuilds, type Replica } from './replicas.js';
import { finished, type DayOptions, type Fault, type Sent } from './fault-day-types.js';
import type { Stage } from './fault-day-stage.js';

export class DayTraffic {
  readonly sent: Sent[] = [];
  readonly inFlight: Promise<void>[] = [];
  /** Replicas no request goes to (the one being killed). */
  readonly down = new Set<string>();
  /** While true, long polls are cut after a second at most. */
  cutting = false;
  /** One repository whose image every reuse request asks for again (built once, first). */
  private readonly reuseRepo: { repository: string };
  private readonly reuseName = uniqueName('day-reuse');

  constructor(
    private readonly stage: Stage,
    private readonly options: DayOptions,
  ) {
    const repo = ownDockerfileRepo(
      `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo reuse-${randomBytes(6).toString('hex')}\n`,
    );
    stage.cleanup.push(repo.remove);
    this.reuseRepo = repo;
  }

  /** The `i`th of the live replicas, in turn. */
  anyLive(i: number): Replica {
    const live = this.stage.replicas.filter((r) => !this.down.has(r.name));
    return live[i % live.length] as Replica;
  }

  /** Until when a build sent now is waited for. */
  deadline(): number {
    return Date.now() + this.options.buildTimeoutSeconds * 1000 + 60_000;
  }

  /** Sends a request of `mode` to `replica` and waits for its end in the background (`inFlight`). */
  launch(mode: Sent['mode'], reuse: boolean, replica: Replica, during?: Fault): Sent {
    const s: Sent = {
      requestId: randomUUID(),
      mode,
      reuse,
      replica: replica.name,
      during,
      sentAt: Date.now(),
    };
    this.sent.push(s);
    const body = this.bodyFor(reuse);
    this.inFlight.push(
      (mode === 'ibs' ? this.sendIbs(s, body) : this.send(s, body)).then(() =>
        this.awaitRecord(s, this.deadline()),
      ),
    );
    return s;
  }

  /** The image the reuse requests ask for again, built by a first sync request (anything else throws). */
  async firstBuild(): Promise<void> {
    const first = this.launch('sync', true, this.anyLive(0));
    await Promise.all(this.inFlight);
    if (first.posted !== 200) throw new Error(`the first build answered ${String(first.posted)}`);
  }

  /** Sends a request every `everyMs`, at least `minBuilds` in all, until stopped. */
  stream(): { stop: () => Promise<void> } {
    let streaming = true;
    let count = 0;
    const running = (async () => {
      while (streaming || count < this.options.minBuilds) {
        const kind = count % 4;
        this.launch(
          kind === 0 || kind === 2 ? 'async' : 'sync',
          kind === 1 || kind === 2,
          this.anyLive(count),
        );
        count += 1;
        await sleep(this.options.everyMs);
      }
    })();
    return {
      stop: async () => {
        streaming = false;
        await running;
      },
    };
  }

  /** Every request's record, found by its request id (a sync answer cut by the kill has one too). */
  async findRecords(): Promise<void> {
    for (const s of this.sent) {
      if (s.id !== undefined) continue;
      const records = await listBuilds(this.anyLive(0), `requestId=${s.requestId}`).catch(() => []);
      const own = records[0];
      if (own !== undefined) {
        s.id = own.id;
        s.record = own;
        await this.awaitRecord(s, this.deadline());
      }
    }
  }

  /** Long polls until the build has finished (polls cut while `cutting`; replicas tried in turn). */
  async awaitRecord(s: Sent, until: number): Promise<void> {
    let turn = 0;
    while (s.id !== undefined && Date.now() < until && !finished(s.record)) {
      const replica = this.anyLive(turn++);
      const abort = new AbortController();
      const cut = this.cutting ? setTimeout(() => abort.abort(), 300 + Math.random() * 700) : undefined;
      try {
        const res = await fetch(`${replica.url}/builds/${s.id}?wait=20`, { signal: abort.signal });
        if (res.status === 200) s.record = (await res.json()) as BuildRecord;
        else await sleep(500);
      } catch {
        await sleep(200);
      } finally {
        clearTimeout(cut);
      }
    }
  }

  /** A request for the reuse image, or for a repository of its own (a real build). */
  private bodyFor(reuse: boolean): Record<string, unknown> {
    const image = { registry: this.stage.front.host, name: reuse ? this.reuseName : uniqueName('day') };
    if (reuse) return { repository: this.reuseRepo.repository, gitCredentials: httpsCreds(), image };
    const repo = ownDockerfileRepo(
      `FROM ${stack.BASE_IMAGE_ANON}\nRUN echo ${randomBytes(8).toString('hex')} > /nonce\n`,
    );
    this.stage.cleanup.push(repo.remove);
    return { repository: repo.repository, gitCredentials: httpsCreds(), image };
  }

  private replicaOf(s: Sent): Replica {
    return this.stage.replicas.find((r) => r.name === s.replica) as Replica;
  }

  private async send(s: Sent, body: Record<string, unknown>): Promise<void> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-request-id': s.requestId,
    };
    if (s.mode === 'async') headers.prefer = 'respond-async';
    try {
      const res = await fetch(`${this.replicaOf(s).url}/build`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      s.posted = res.status;
      const answer = (await res.json()) as Record<string, unknown>;
      if (res.status === 202) s.id = String(answer.id);
      else if (res.status === 200 || res.status === 500) s.syncBody = answer;
    } catch (problem) {
      s.posted = `no answer: ${(problem as Error).message}`;
    }
  }

  private async sendIbs(s: Sent, body: Record<string, unknown>): Promise<void> {
    const image = body.image as { registry: string; name: string };
    const ibs = runIbs(
      ibsBuildArgs(
        {
          server: this.replicaOf(s).url,
          repository: String(body.repository),
          registry: image.registry,
          name: image.name,
        },
        '--request-id',
        s.requestId,
        '--timeout',
        String(this.options.buildTimeoutSeconds),
      ),
      { IBS_GIT_USERNAME: stack.GIT_HTTPS_USER, IBS_GIT_TOKEN: stack.GIT_HTTPS_PASSWORD },
    );
    s.ibsExit = await ibs.exited;
    s.posted = s.ibsExit === 0 ? 200 : `ibs exit ${String(s.ibsExit)}: ${ibs.stderr().slice(-600)}`;
  }
}
