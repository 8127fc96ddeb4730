/**
 * The queue's 429s, decided from its counters (docs/queue.md): a full queue (requests against
 * `build.maxQueued`, prebuilds against `build.maxQueuedPrebuilds`), a tenant at its quota of
 * waiting requests, a synchronous request of a tenant at its quota of running builds. Each
 * carries a Retry-After from how fast the queue drained lately. Pure.
 */
import type { Config, TenantQuota } from '../../src/config/types.js';
import { serviceError, type ServiceError } from '../../src/errors/errors.js';
import { drainSeconds, isPrebuildClass, type QueueClass } from '../../src/queue/fair-order.js';
import type { Admission } from '../../src/queue/types.js';

/** Retry-After of a full queue before any build has left it. */
const FULL_RETRY_AFTER_SECONDS = 60;

/** The builds of `queueClass`'s kind waiting (requests, or prebuilds), and their bound. */
function kindOf(
  admission: Admission,
  queueClass: QueueClass,
  build: Pick<Config['build'], 'maxQueued' | 'maxQueuedPrebuilds'>,
): { waiting: number; bound: number } {
  const { api, ...prebuilds } = admission.depths;
  return isPrebuildClass(queueClass)
    ? { waiting: Object.values(prebuilds).reduce((a, b) => a + b, 0), bound: build.maxQueuedPrebuilds }
    : { waiting: api, bound: build.maxQueued };
}

/**
 * The 429 of a build of `queueClass` and `tenant` that cannot join the queue, if any; `takes`
 * (when the last builds left) is read only when one is refused.
 */
export async function fullRefusal(
  admission: Admission,
  queued: { readonly class: QueueClass; readonly tenant: string; readonly quota: TenantQuota | undefined },
  build: Pick<Config['build'], 'maxQueued' | 'maxQueuedPrebuilds'>,
  takes: () => Promise<readonly number[]>,
): Promise<ServiceError | undefined> {
  const { waiting, bound } = kindOf(admission, queued.class, build);
  const tenantFull =
    !isPrebuildClass(queued.class) &&
    queued.quota?.maxQueued !== undefined &&
    admission.tenantWaiting >= queued.quota.maxQueued;
  if (waiting < bound && !tenantFull) return undefined;
  const retryAfterSeconds = drainSeconds(await takes(), waiting, FULL_RETRY_AFTER_SECONDS);
  return waiting >= bound
    ? serviceError('QUEUE_FULL', { queued: waiting }, { retryAfterSeconds })
    : serviceError(
        'TENANT_QUEUE_FULL',
        { tenant: queued.tenant, queued: admission.tenantWaiting },
        { retryAfterSeconds },
      );
}

/** The 429 of a synchronous build of a tenant at its quota of running builds. */
export function busyRefusal(tenant: string, running: number, takes: readonly number[]): ServiceError {
  return serviceError(
    'TENANT_BUSY',
    { tenant, running },
    { retryAfterSeconds: drainSeconds(takes, 1, FULL_RETRY_AFTER_SECONDS) },
  );
}
