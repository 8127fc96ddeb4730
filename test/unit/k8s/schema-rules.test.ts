/**
 * The chart's values schema restates a few of the service's rules as JSON-schema patterns (Helm
 * validates values before anything runs). They must agree with the service's own rule, stated
 * once in src/: the registry and platform patterns are the same strings, and the cache-spec and
 * pinned-host-key patterns accept exactly what the service's parsers accept, over a table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { Ajv } from 'ajv';
import { parseCacheSpec } from '../../../src/rules/cache-spec.js';
import { isPinnedHostKey } from '../../../src/config/known-hosts.js';
import { BUILD_PLATFORM_PATTERN } from '../../../src/rules/image-reference.js';
import { REGISTRY_PATTERN } from '../../../src/rules/image-reference.js';

const schema = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../../k8s/image-build-service/values.schema.json'), 'utf8'),
) as {
  definitions: {
    registry: { pattern: string };
    cacheSpec: { pattern: string };
    gitCredential: { properties: { pinnedHostKey: { pattern: string } } };
  };
  properties: { build: { properties: { platforms: { items: { pattern: string } } } } };
};

const accepts = (pattern: string) => {
  const validate = new Ajv().compile({ type: 'string', pattern });
  return (value: string): boolean => validate(value);
};

test('the registry pattern is the service reference grammar, namespace path included', (t) => {
  t.is(schema.definitions.registry.pattern, REGISTRY_PATTERN);
  const ok = accepts(schema.definitions.registry.pattern);
  t.true(ok('ghcr.io/org'));
  t.true(ok('localhost:5000/team/sub'));
  t.false(ok('https://ghcr.io'));
});

test('the platforms item pattern is the contract platform pattern', (t) => {
  t.is(schema.properties.build.properties.platforms.items.pattern, BUILD_PLATFORM_PATTERN);
});

const CACHE_SPECS = [
  '',
  'r/c',
  'localhost:5000/team/cache:buildcache',
  'type=registry,ref=r/c',
  'type=registry,ref=r/c,mode=max',
  'ref=r/c,mode=max',
  'mode=max,type=gha,scope=x',
  'TYPE=inline',
  'type=inline',
  'type=gha',
  'type=local,dest=/tmp/c',
  'type=s3,bucket=x',
  'type=registry, ref=r/c',
  'type=registry,ref=r/c,type=local',
  'type=registry,type=registry',
  'type=registry,ref="r/c"',
  'a,b',
  '=x',
  'type=',
  'types=local,ref=x',
  'typ=x,ref=y',
  'ref=a=b',
  'type=registry,',
  'r/c ',
  'ty pe=registry',
];

test('the cache-spec pattern accepts exactly what the service accepts (empty = unset)', (t) => {
  const ok = accepts(schema.definitions.cacheSpec.pattern);
  for (const spec of CACHE_SPECS) {
    t.is(ok(spec), spec === '' || parseCacheSpec(spec).ok, JSON.stringify(spec));
  }
});

const KEY = 'AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl';
const PINS = [
  `[127.0.0.1]:2222 ssh-ed25519 ${KEY}`,
  `[127.0.0.1]:2222 ssh-ed25519 ${KEY} a comment with spaces`,
  `ssh-ed25519 ${KEY}`,
  `ssh-ed25519 ${KEY} comment`,
  `# a comment\nhost ssh-ed25519 ${KEY}\n`,
  `host ssh-ed25519 ${KEY}\nhost2 ecdsa-sha2-nistp256 ${KEY}`,
  `@cert-authority *.example ssh-ed25519 ${KEY}`,
  '',
  '# only a comment',
  'host ssh-ed25519',
  `host rsa ${KEY}`,
  `host ssh-ed25519 ${KEY}\nnot a key line`,
  `host ssh-ed25519 not-base64!`,
];

test('the pinnedHostKey pattern accepts exactly what the service accepts', (t) => {
  const ok = accepts(schema.definitions.gitCredential.properties.pinnedHostKey.pattern);
  for (const pin of PINS) t.is(ok(pin), isPinnedHostKey(pin), JSON.stringify(pin));
});
