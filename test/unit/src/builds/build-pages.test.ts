// The pages of the embedded build registry: the promises every registry keeps (the shared suite).
import { createMemoryBuildRegistry } from '../../../../src/builds/memory-registry.js';
import { buildPagesSuite } from '../../../helpers/build-pages-suite.js';

buildPagesSuite('embedded', async (_t, options) => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const registry = createMemoryBuildRegistry({ ...options, now: () => now });
  return { registry, advance: (ms) => (now += ms) };
});
