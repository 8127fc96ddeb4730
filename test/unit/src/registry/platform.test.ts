import test from 'ava';
import type { Descriptor } from '../../../../src/registry/manifest.js';
import { BUILD_PLATFORM_PATTERN, PLATFORM_PARAM_PATTERN } from '../../../../src/rules/image-reference.js';
import {
  isAttestation,
  normalizePlatform,
  parsePlatform,
  platformMatches,
  selectPlatform,
} from '../../../../src/registry/platform.js';

const d = (
  digest: string,
  os: string,
  architecture: string,
  variant?: string,
  annotations?: Record<string, string>,
): Descriptor => ({
  digest: `sha256:${digest.padEnd(64, '0')}`,
  platform: variant ? { os, architecture, variant } : { os, architecture },
  ...(annotations ? { annotations } : {}),
});

test('normalizePlatform resolves architecture aliases and the arm64/v8 variant', (t) => {
  const rows: [string, string][] = [
    ['linux/x86_64', 'linux/amd64'],
    ['linux/aarch64', 'linux/arm64'],
    ['linux/arm64/v8', 'linux/arm64'],
    ['Linux/AMD64', 'linux/amd64'],
    ['linux/i386', 'linux/386'],
    ['linux/arm/v7', 'linux/arm/v7'],
    ['windows/amd64', 'windows/amd64'],
  ];
  for (const [input, want] of rows) {
    const p = parsePlatform(input);
    t.is([p.os, p.architecture, p.variant].filter(Boolean).join('/'), want, input);
  }
  t.deepEqual(normalizePlatform({ os: 'linux', architecture: 'aarch64', variant: 'v8' }), {
    os: 'linux',
    architecture: 'arm64',
  });
});

test('platformMatches compares after normalising; a wanted variant must match', (t) => {
  const rows: [string, string, boolean][] = [
    ['linux/amd64', 'linux/x86_64', true],
    ['linux/arm64/v8', 'linux/aarch64', true],
    ['linux/arm64', 'linux/arm64/v8', true],
    ['linux/arm/v7', 'linux/arm', true],
    ['linux/arm/v6', 'linux/arm/v7', false],
    ['linux/arm', 'linux/arm/v7', false],
    ['linux/amd64', 'linux/386', false],
    ['windows/amd64', 'linux/amd64', false],
  ];
  for (const [entry, wanted, want] of rows)
    t.is(platformMatches(parsePlatform(entry), parsePlatform(wanted)), want, `${entry} vs ${wanted}`);
});

const buildkitIndex: Descriptor[] = [
  d('a', 'linux', 'amd64'),
  d('b', 'linux', '386'),
  d('c', 'unknown', 'unknown', undefined, {
    'vnd.docker.reference.type': 'attestation-manifest',
    'vnd.docker.reference.digest': 'sha256:a',
  }),
  d('e', 'unknown', 'unknown', undefined, { 'vnd.docker.reference.type': 'attestation-manifest' }),
];

test('selectPlatform picks the entry of the wanted platform, never an attestation', (t) => {
  const rows: [Descriptor[], string, string | string[]][] = [
    [buildkitIndex, 'linux/amd64', 'a'],
    [buildkitIndex, 'linux/386', 'b'],
    [buildkitIndex, 'linux/x86_64', 'a'],
    [buildkitIndex, 'unknown/unknown', ['linux/amd64', 'linux/386']],
    [buildkitIndex, 'linux/arm64', ['linux/amd64', 'linux/386']],
    // exact variant preferred over the first matching entry
    [[d('1', 'linux', 'arm', 'v6'), d('2', 'linux', 'arm', 'v7')], 'linux/arm/v7', '2'],
    [[d('1', 'linux', 'arm', 'v6'), d('2', 'linux', 'arm')], 'linux/arm', '2'],
    [[d('1', 'linux', 'arm', 'v6'), d('2', 'linux', 'arm', 'v7')], 'linux/arm', '1'],
    [[d('1', 'linux', 'aarch64', 'v8')], 'linux/arm64', '1'],
    // an entry without platform is skipped; duplicates listed once
    [
      [{ digest: `sha256:${'9'.repeat(64)}` }, d('1', 'linux', 'amd64'), d('2', 'linux', 'amd64')],
      'linux/s390x',
      ['linux/amd64'],
    ],
    [[], 'linux/amd64', []],
  ];
  for (const [manifests, wanted, want] of rows) {
    const got = selectPlatform(manifests, parsePlatform(wanted));
    if (typeof want === 'string') {
      t.true(got.found && got.descriptor.digest === `sha256:${want.padEnd(64, '0')}`, `${wanted} -> ${want}`);
    } else {
      t.deepEqual(got, { found: false, available: want }, wanted);
    }
  }
});

test('isAttestation recognises the annotation and the unknown/unknown platform', (t) => {
  t.true(isAttestation(d('x', 'unknown', 'unknown')));
  t.true(
    isAttestation(
      d('x', 'linux', 'amd64', undefined, { 'vnd.docker.reference.type': 'attestation-manifest' }),
    ),
  );
  t.false(isAttestation(d('x', 'linux', 'amd64')));
});

test("the contract's two platform patterns: build items are strict, the lookup parameter is lenient", (t) => {
  const build = new RegExp(BUILD_PLATFORM_PATTERN);
  const param = new RegExp(PLATFORM_PARAM_PATTERN);
  for (const ok of ['linux/amd64', 'linux/arm/v7', 'linux/x86_64', 'windows/amd64']) {
    t.true(build.test(ok), ok);
    t.true(param.test(ok), ok);
  }
  // The lookup normalises what the build would refuse.
  for (const lenient of ['Linux/AMD64', 'linux/x86-64', 'linux/arm64/v8.2']) {
    t.false(build.test(lenient), lenient);
    t.true(param.test(lenient), lenient);
  }
  for (const bad of ['linux', 'linux/', '/amd64', 'linux/arm/v7/x', 'linux//amd64']) {
    t.false(build.test(bad), bad);
    t.false(param.test(bad), bad);
  }
});
