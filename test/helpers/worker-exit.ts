/**
 * Loaded in every test worker (package.json `ava.require`): a worker exits once its tests are
 * done, even if something it started still holds the event loop. Without this, AVA waits for
 * the worker's exit, and its inactivity timeout can be lost while a long `t.timeout` is in force:
 * the run would wait forever instead of ending with its results.
 */
import { registerCompletionHandler } from 'ava';

registerCompletionHandler(() => {
  process.exit();
});
