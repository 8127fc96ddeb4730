/**
 * What started a build, which is also its class in the queue (docs/queue.md): a request (`api`),
 * a webhook's push, a reconcile or a refresh (docs/prebuilds.md).
 */
export const QUEUE_CLASSES = ['api', 'push', 'reconcile', 'refresh'] as const;
export type QueueClass = (typeof QUEUE_CLASSES)[number];
