/**
 * GET /builds/events: the change feed of the pages, as server-sent events. Each change of a build
 * the caller may read is one `build` event naming its id (nothing else: the page reads the record
 * with GET /builds/{id}); `reset` says changes may have been missed (read the first page again).
 * A feed lasts at most FEED_MS, then ends (the browser reconnects), so that a replica that drains
 * is never held by its feeds; a comment every HEARTBEAT_MS keeps fronts from closing it.
 */
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { BuildRegistry } from '../builds/types.js';
import { serviceError } from '../errors/errors.js';

const FEED_MS = 55_000;
const HEARTBEAT_MS = 15_000;
/** What the browser waits before it reconnects (the `retry` field). */
const RETRY_MS = 1000;

/**
 * Answers the feed on `koaCtx` until the client goes away or FEED_MS pass; `readable` tells
 * which repositories' builds the caller may hear of.
 */
export async function streamChanges(
  builds: Pick<BuildRegistry, 'watchChanges'>,
  koaCtx: Context,
  readable: (repository: string) => boolean,
): Promise<void> {
  if (Object.keys(koaCtx.query).length > 0)
    throw serviceError('INVALID_BUILD_FILTERS', { filters: ['other'] });
  const out = new PassThrough();
  const stop = await builds.watchChanges((change) => {
    if (change.id === '') out.write('event: reset\ndata: {}\n\n');
    else if (readable(change.repository))
      out.write(`event: build\ndata: ${JSON.stringify({ id: change.id })}\n\n`);
  });
  const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const end = setTimeout(() => out.end(), FEED_MS);
  const cleanUp = (): void => {
    stop();
    clearInterval(heartbeat);
    clearTimeout(end);
  };
  out.once('close', cleanUp);
  koaCtx.res.once('close', () => {
    cleanUp();
    out.destroy();
  });
  koaCtx.status = 200;
  koaCtx.type = 'text/event-stream';
  koaCtx.set('Cache-Control', 'no-store');
  // A front that buffers answers (nginx, ingress-nginx) passes each event on as it comes.
  koaCtx.set('X-Accel-Buffering', 'no');
  out.write(`retry: ${RETRY_MS}\n\n`);
  koaCtx.body = out;
}
