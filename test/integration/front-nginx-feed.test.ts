/**
 * The change feed (GET /builds/events) through Debian's nginx, configured as the stack's front:
 * each event reaches the client as it happens, not when a buffer fills or the stream ends. (The
 * service also sends `X-Accel-Buffering: no`, which nginx reads and never passes on, for fronts
 * that would hold a streamed answer.)
 */
import test from 'ava';
import { startApp } from '../helpers/app.js';
import { startFront } from '../helpers/nginx.js';

test('a build change reaches a feed read through nginx within a second or two', async (t) => {
  const app = await startApp();
  t.teardown(app.close);
  const front = await startFront({ routes: [{ location: '/', upstreams: [app.url] }], idleSeconds: 30 });
  t.teardown(front.stop);
  const gone = new AbortController();
  t.teardown(() => gone.abort());
  const res = await fetch(`${front.url}/builds/events`, { signal: gone.signal });
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const read = async (part: string): Promise<number> => {
    const started = Date.now();
    while (!text.includes(part)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the feed ended before ${part}`);
      text += decoder.decode(value, { stream: true });
    }
    return Date.now() - started;
  };
  await read('retry: 1000');
  const asked = Date.now();
  const id = await app.ctx.builds.start({
    requestId: 'front',
    repository: 'https://git.example.com/team/app.git',
    image: 'r.example/app',
  });
  await read(`data: {"id":"${id}"}`);
  const took = Date.now() - asked;
  t.log(`the event reached the client ${took} ms after the change`);
  t.true(took < 2000, `${took} ms: nginx held the event`);
});
