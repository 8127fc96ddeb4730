/**
 * The event types the service sends (docs/events.md): CDEvents where CDEvents has the event, one of
 * its own for a deleted image. A subscription names a type with or without its version suffix.
 */
export const BUILD_FINISHED = 'dev.cdevents.build.finished.0.2.0';
export const ARTIFACT_PUBLISHED = 'dev.cdevents.artifact.published.0.2.0';
export const IMAGE_DELETED = 'dev.imagebuildservice.image.deleted.0.1.0';
/** An access decision of the audit trail (docs/auth.md). */
export const ACCESS_DECIDED = 'dev.imagebuildservice.access.decided.0.1.0';

/** A tenant's month of build minutes reached its warning share, or its budget (docs/usage.md). */
export const BUDGET_WARNING = 'dev.imagebuildservice.budget.warning.0.1.0';
export const BUDGET_EXCEEDED = 'dev.imagebuildservice.budget.exceeded.0.1.0';

const EVENT_TYPES = [
  BUILD_FINISHED,
  ARTIFACT_PUBLISHED,
  IMAGE_DELETED,
  ACCESS_DECIDED,
  BUDGET_WARNING,
  BUDGET_EXCEEDED,
] as const;
/** Types sent only to subscriptions naming them (a subscription without `types` gets the others). */
export const OPT_IN_TYPES: readonly string[] = [ACCESS_DECIDED];

/** The statuses a subscription may filter a finished build's events on. */
export const EVENT_STATUSES = ['success', 'failure'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** `dev.cdevents.build.finished.0.2.0` -> `dev.cdevents.build.finished`. */
const unversioned = (type: string): string => type.replace(/\.\d+\.\d+\.\d+(?:-[\w.]+)?$/, '');

/** Whether a subscription's type name (with or without version) names `type`. */
export const typeMatches = (name: string, type: string): boolean =>
  name === type || name === unversioned(type);

/** Whether `name` names one of the service's event types. */
export const isKnownType = (name: string): boolean => EVENT_TYPES.some((type) => typeMatches(name, type));

/** A subscription's name: used in Redis keys, file names, metrics labels. */
export const SUBSCRIPTION_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
/** `whsec_` and the base64 of the signing key (Standard Webhooks). */
export const WEBHOOK_SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
export const MIN_SECRET_BYTES = 24;
export const MAX_SECRET_BYTES = 64;
