/**
 * A builder's cache use read from `docker buildx du`: its totals in bytes (docker's decimal
 * units), none from output without them, and a read that never waits for buildx.
 */
import test from 'ava';
import {
  BuilderCacheUse,
  parseDiskUsage,
  parseSize,
} from '../../../../../workers/builder/fleet/cache-use.js';

const OUTPUT = `ID                                      RECLAIMABLE	SIZE      	LAST ACCESSED
0gxqhk1yntmj7l9l3nqob1b7q*              true 		4.096kB   	27 minutes ago
Shared:		8.788MB
Private:	7.453MB
Reclaimable:	16.24MB
Total:		1.5GB
`;

test('sizes in docker units', (t) => {
  t.is(parseSize('0B'), 0);
  t.is(parseSize('4.096kB'), 4096);
  t.is(parseSize('16.24MB'), 16_240_000);
  t.is(parseSize('1.5GB'), 1_500_000_000);
  t.is(parseSize('many'), undefined);
});

test('the totals of buildx du, none without a Total line', (t) => {
  t.deepEqual(parseDiskUsage(OUTPUT), {
    totalBytes: 1_500_000_000,
    reclaimableBytes: 16_240_000,
    sharedBytes: 8_788_000,
    privateBytes: 7_453_000,
  });
  t.is(parseDiskUsage('ID RECLAIMABLE SIZE\n'), undefined);
});

test('a builder buildx does not know has no reading, and a read does not wait', async (t) => {
  const use = new BuilderCacheUse({ config: { childEnv: {}, dockerConfigDir: '/nonexistent' } });
  t.is(use.read('svc'), undefined);
  await use.refresh('svc');
  t.is(use.read('svc'), undefined);
});
