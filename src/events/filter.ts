/**
 * Which subscriptions an event goes to: its type among the subscription's types (all when none),
 * the build's repository within its repositories, the build's status among its statuses. Pure.
 */
import type { EventSubscription } from '../config/types.js';
import { scopeCovers } from '../rules/build-secret-rules.js';
import { OPT_IN_TYPES, typeMatches } from '../rules/event-types.js';
import { repositoryParts } from '../rules/repository-parts.js';

/** What a subscription filters on besides the type (absent for events of no build). */
export interface EventScope {
  readonly repository?: string;
  readonly status?: string;
}

function repositoryMatches(subscription: EventSubscription, repository: string | undefined): boolean {
  if (subscription.repositories === undefined) return true;
  const parts = repository === undefined ? undefined : repositoryParts(repository);
  if (parts === undefined) return false;
  return subscription.repositories.some((scope) => scopeCovers(scope, parts.host, parts.path));
}

function statusMatches(subscription: EventSubscription, status: string | undefined): boolean {
  if (subscription.statuses === undefined || status === undefined) return true;
  const outcome = status === 'success' ? 'success' : 'failure';
  return subscription.statuses.includes(outcome);
}

export function subscribed(subscription: EventSubscription, type: string, scope: EventScope): boolean {
  const typeOk =
    subscription.types === undefined
      ? !OPT_IN_TYPES.includes(type)
      : subscription.types.some((name) => typeMatches(name, type));
  return (
    typeOk && repositoryMatches(subscription, scope.repository) && statusMatches(subscription, scope.status)
  );
}
