// One side of `npm run bench:builds-page`, run as its own process from a checkout (this tree, or
// the baseline's temporary worktree): the app of that checkout on 127.0.0.1:0 in Redis mode
// (argv: checkout dir, Redis URL, records), filled with that many finished builds through its own
// build registry; then prints `{"url": ...}` on stdout and serves until stdin closes.
import { join } from 'node:path';
import type * as AppHelpers from '../test/helpers/app.js';
import { finishedBuild } from './finished-build.js';

const [checkout, redisUrl, countText] = process.argv.slice(2) as [string, string, string];
const count = Number(countText);
const helpers = (await import(join(checkout, 'test/helpers/app.ts'))) as typeof AppHelpers;
const app = await helpers.startApp({ redis: { url: redisUrl }, build: { history: count } });

const finished = (i: number): Promise<void> => finishedBuild(app.ctx.builds, i);

// The first write waits for the connection to Redis (no offline queue: it answers 503 meanwhile).
for (let tries = 0; ; tries++) {
  try {
    await finished(0);
    break;
  } catch (err) {
    if (tries === 100) {
      await app.close();
      throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
const IN_FLIGHT = 32;
let next = 1;
try {
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await finished(next++);
    }),
  );
} catch (err) {
  await app.close();
  throw err;
}
process.stdout.write(`${JSON.stringify({ url: app.url })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void app.close().then(() => process.exit(0));
});
