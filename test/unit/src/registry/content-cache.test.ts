import test from 'ava';
import { ContentCache } from '../../../../src/registry/content-cache.js';

const buf = (n: number, fill = 'x'): Buffer => Buffer.alloc(n, fill);

test('ContentCache evicts the least recently used entries beyond its byte budget', (t) => {
  const cache = new ContentCache(100, 10);
  cache.set('a', buf(40));
  cache.set('b', buf(40));
  t.truthy(cache.get('a')); // a is now more recent than b
  cache.set('c', buf(40)); // 120 bytes > 100: evict b
  t.is(cache.get('b'), undefined);
  t.truthy(cache.get('a'));
  t.truthy(cache.get('c'));
  t.is(cache.totalBytes, 80);
});

test('ContentCache bounds the entry count, ignores oversized items and replaces in place', (t) => {
  const cache = new ContentCache(1000, 2);
  cache.set('a', buf(1));
  cache.set('b', buf(1));
  cache.set('c', buf(1));
  t.is(cache.size, 2);
  t.is(cache.get('a'), undefined);
  cache.set('huge', buf(1001));
  t.is(cache.get('huge'), undefined);
  cache.set('b', buf(5, 'y'));
  t.is(cache.size, 2);
  t.is(cache.totalBytes, 6);
  t.deepEqual(cache.get('b'), buf(5, 'y'));
});
