/**
 * What started a build, which is also its class in the queue (docs/queue.md): a request (`api`),
 * or a prebuild trigger: a webhook's push, a reconcile or a refresh (docs/prebuilds.md). The one
 * list both trigger types derive from.
 */

/** What starts a prebuild. */
const PREBUILD_TRIGGERS = ['push', 'reconcile', 'refresh'] as const;
export type PrebuildTrigger = (typeof PREBUILD_TRIGGERS)[number];

/** What starts a build: a request, or a prebuild trigger. */
export const BUILD_TRIGGERS = ['api', ...PREBUILD_TRIGGERS] as const;
export type BuildTrigger = (typeof BUILD_TRIGGERS)[number];

/** A build's class in the queue: its trigger. */
export const QUEUE_CLASSES = BUILD_TRIGGERS;
export type QueueClass = BuildTrigger;
