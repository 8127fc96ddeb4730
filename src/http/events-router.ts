/** GET /events/deliveries: the recent deliveries of events, newest first, filtered by subscription and state. */
import Router from '@koa/router';
import type { Config } from '../config/types.js';
import { serviceError } from '../errors/errors.js';
import { DELIVERY_STATES, type DeliveryFilter, type DeliveryState } from '../events/types.js';
import type { AppContext } from './context.js';
import { authorizeAdmin } from './access.js';

const FILTERS = new Set(['subscription', 'status']);

/** The filter of a query (koa's parsed query: a repeated parameter is an array, hence refused). */
function parseDeliveriesQuery(
  query: Record<string, unknown>,
  config: Pick<Config, 'events'>,
): DeliveryFilter {
  const problems = Object.keys(query)
    .filter((key) => !FILTERS.has(key))
    .map((key) => `unknown filter "${key}"`);
  const { subscription, status } = query;
  const names = config.events.subscriptions.map((s) => s.name);
  if (subscription !== undefined && (typeof subscription !== 'string' || !names.includes(subscription)))
    problems.push('subscription must name one subscription');
  if (
    status !== undefined &&
    (typeof status !== 'string' || !(DELIVERY_STATES as readonly string[]).includes(status))
  )
    problems.push(`status must be one of ${DELIVERY_STATES.join(', ')}`);
  if (problems.length > 0) throw serviceError('INVALID_DELIVERY_FILTERS', { filters: problems });
  return {
    ...(typeof subscription === 'string' ? { subscription } : {}),
    ...(typeof status === 'string' ? { status: status as DeliveryState } : {}),
  };
}

export function createEventsRouter(ctx: Pick<AppContext, 'config' | 'events' | 'access'>): Router {
  const router = new Router();
  router.get('/events/deliveries', async (koaCtx) => {
    await authorizeAdmin(ctx.access, koaCtx);
    const filter = parseDeliveriesQuery(koaCtx.query, ctx.config);
    koaCtx.set('Cache-Control', 'no-store');
    koaCtx.body = { deliveries: ctx.events === undefined ? [] : await ctx.events.deliveries(filter) };
  });
  return router;
}
