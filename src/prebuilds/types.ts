/**
 * The prebuild vocabulary shared by the webhook routes (src/http) and the trigger logic
 * (workers/prebuilds): a push as read from a signed payload, and a delivery (a webhook or a
 * scheduled check) with the decision taken and why (docs/prebuilds.md). The forges and the
 * triggers are rules of their own (src/rules/forges.ts, src/rules/build-classes.ts).
 */
import type { Forge } from '../rules/forges.js';
import type { PrebuildTrigger } from '../rules/build-classes.js';

export type { Forge } from '../rules/forges.js';
export type { PrebuildTrigger } from '../rules/build-classes.js';

/** A push event from a signed payload: it only selects among the configured repositories and branches. */
export interface PushEvent {
  readonly forge: Forge;
  /** The forge's delivery id header, when it sent one. */
  readonly deliveryId?: string;
  /** Every URL the payload gives for its repository (clone, ssh, web); matched after normalising. */
  readonly repositoryUrls: readonly string[];
  /** The full ref pushed (`refs/heads/<branch>`, or a tag). */
  readonly ref: string;
  /** Commit ids; all zeros for a created (before) or deleted (after) ref. */
  readonly before: string;
  readonly after: string;
}

type Decision = 'built' | 'ignored' | 'refused' | 'superseded' | 'failed';

/** One webhook delivery or scheduled check, as GET /hooks/deliveries lists it. */
export interface Delivery {
  readonly id: string;
  /** ISO 8601, UTC. */
  readonly at: string;
  readonly trigger: PrebuildTrigger;
  readonly forge?: Forge;
  readonly deliveryId?: string;
  /** The configured repository (as configured), when one matched. */
  readonly repository?: string;
  readonly branch?: string;
  readonly commit?: string;
  readonly decision: Decision;
  /** `built bld-...`, `ignored: branch not configured`, `superseded by <commit>`... */
  readonly reason: string;
  /** The build started, when one was. */
  readonly buildId?: string;
}

export type NewDelivery = Omit<Delivery, 'id' | 'at'>;

/** The recent deliveries (newest first); a build's delivery is updated when it is superseded. */
export interface DeliveryLog {
  add(delivery: NewDelivery): Promise<Delivery>;
  update(id: string, change: Pick<Delivery, 'decision' | 'reason'>): Promise<void>;
  list(): Promise<Delivery[]>;
}
