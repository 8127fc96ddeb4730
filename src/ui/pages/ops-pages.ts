/**
 * The operators' pages, read-only: /ui/builders (GET /health/ready: each builder's state,
 * platforms and cache use, with the builds in flight on it), /ui/retention (GET /retention/plan: each image
 * kept or deleted, and why) and /ui/deliveries (GET /events/deliveries and GET /hooks/deliveries).
 */
import { call, getJson, statusOf, type Build } from './api.js';
import { bytes, h, replace, table, when } from './dom.js';
import { poll } from './live.js';

interface BuilderState {
  readonly builder: string;
  readonly state: string;
  readonly reason?: string;
  readonly platforms: readonly string[];
  /** The builder's cache use as BuildKit reports it; absent until read. */
  readonly cache?: {
    readonly totalBytes: number;
    readonly reclaimableBytes: number;
    readonly readAt: string;
  };
}

/** A builder's cache use: its size, what BuildKit could reclaim, and when it was read. */
function cacheUse(cache: BuilderState['cache']): HTMLElement {
  if (cache === undefined) return h('span', { class: 'empty' }, 'not reported');
  return h(
    'span',
    { class: 'cache-use', title: `read ${when(cache.readAt)}` },
    `${bytes(cache.totalBytes)} (${bytes(cache.reclaimableBytes)} reclaimable)`,
  );
}

const OPS_POLL_MS = 2000;

function buildLink(id: string | undefined): HTMLElement | undefined {
  return id === undefined ? undefined : h('a', { href: `/ui/builds/${encodeURIComponent(id)}` }, id);
}

function onBuilder(build: Build, builder: string): boolean {
  return build.builder === builder || (build.builders ?? []).some((x) => x.builder === builder);
}

export async function buildersPage(root: HTMLElement, signal: AbortSignal): Promise<void> {
  const body = h('div', { class: 'builders' });
  replace(root, h('h1', {}, 'Builders'), body);
  await poll(signal, OPS_POLL_MS, async () => {
    const ready = (await (await call('/health/ready', { signal })).json()) as {
      status: string;
      reason?: string;
      builders?: BuilderState[];
    };
    const running = (await getJson<{ builds: Build[] }>('/builds?status=running&limit=500', signal)).builds;
    replace(
      body,
      h('p', {}, `Service: ${ready.status}${ready.reason === undefined ? '' : ` (${ready.reason})`}`),
      table(
        ['Builder', 'State', 'Platforms', 'Cache', 'Builds in flight'],
        (ready.builders ?? []).map((builder) => {
          const here = running.filter((r) => statusOf(r) === 'running' && onBuilder(r, builder.builder));
          return [
            h('code', {}, builder.builder),
            h(
              'span',
              { class: `badge ${builder.state}` },
              builder.reason === undefined ? builder.state : `${builder.state}: ${builder.reason}`,
            ),
            builder.platforms.join(', ') || 'its own',
            cacheUse(builder.cache),
            h('span', {}, ...here.flatMap((r, i) => [i > 0 ? ', ' : '', buildLink(r.id)])),
          ];
        }),
      ),
    );
  });
}

interface RetentionPlan {
  readonly mode: string;
  readonly at: string;
  readonly policy: Record<string, unknown>;
  readonly repositories: readonly {
    repository: string;
    error?: string;
    images: readonly {
      tag: string;
      digest: string;
      branch: string;
      built: string;
      action: string;
      reason: string;
    }[];
  }[];
}

export async function retentionPage(root: HTMLElement, signal: AbortSignal): Promise<void> {
  replace(root, h('h1', {}, 'Retention'), h('p', { class: 'empty' }, 'Planning...'));
  const plan = await getJson<RetentionPlan>('/retention/plan', signal);
  replace(
    root,
    h('h1', {}, 'Retention'),
    h('p', {}, `Mode ${plan.mode}, planned ${when(plan.at)}; policy ${JSON.stringify(plan.policy)}`),
    ...plan.repositories.map((repo) =>
      h(
        'section',
        { class: 'panel' },
        h('h2', {}, repo.repository),
        repo.error === undefined ? undefined : h('p', { class: 'error' }, repo.error),
        table(
          ['Tag', 'Branch', 'Built', 'Action', 'Why'],
          repo.images.map((image) => [
            h('code', {}, image.tag),
            image.branch,
            when(image.built),
            h('span', { class: `badge ${image.action}` }, image.action),
            image.reason,
          ]),
        ),
      ),
    ),
  );
}

interface EventDelivery {
  readonly id: string;
  readonly subscription: string;
  readonly type: string;
  readonly status: string;
  readonly attempts: number;
  readonly lastStatus?: number | string;
  readonly recordedAt: string;
}

interface HookDelivery {
  readonly at: string;
  readonly trigger: string;
  readonly forge?: string;
  readonly repository?: string;
  readonly branch?: string;
  readonly decision: string;
  readonly reason: string;
  readonly buildId?: string;
}

export async function deliveriesPage(root: HTMLElement, signal: AbortSignal): Promise<void> {
  const body = h('div');
  replace(root, h('h1', {}, 'Deliveries'), body);
  await poll(signal, OPS_POLL_MS, async () => {
    const events = (await getJson<{ deliveries: EventDelivery[] }>('/events/deliveries', signal)).deliveries;
    const hooks = (await getJson<{ deliveries: HookDelivery[] }>('/hooks/deliveries', signal)).deliveries;
    replace(
      body,
      h(
        'section',
        { class: 'panel' },
        h('h2', {}, 'Events to subscribers'),
        table(
          ['Recorded', 'Subscription', 'Type', 'State', 'Attempts', 'Last answer'],
          events.map((delivery) => [
            when(delivery.recordedAt),
            delivery.subscription,
            delivery.type,
            h('span', { class: `badge ${delivery.status}` }, delivery.status),
            delivery.attempts,
            delivery.lastStatus,
          ]),
        ),
      ),
      h(
        'section',
        { class: 'panel' },
        h('h2', {}, 'Webhooks and schedules'),
        table(
          ['At', 'Trigger', 'Repository', 'Branch', 'Decision', 'Why', 'Build'],
          hooks.map((delivery) => [
            when(delivery.at),
            delivery.forge ?? delivery.trigger,
            delivery.repository,
            delivery.branch,
            h('span', { class: `badge ${delivery.decision}` }, delivery.decision),
            delivery.reason,
            buildLink(delivery.buildId),
          ]),
        ),
      ),
    );
  });
}
