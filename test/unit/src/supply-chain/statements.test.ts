import test from 'ava';
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import {
  REUSE_BUILD_TYPE,
  SLSA_PROVENANCE_V1,
  STATEMENT_V1,
  restate,
  reuseProvenance,
  subjectOf,
} from '../../../../src/supply-chain/in-toto.js';
import {
  signatureConfig,
  signatureTag,
  simpleSigningPayload,
} from '../../../../src/supply-chain/simple-signing.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const SOURCE = `sha256:${'b'.repeat(64)}`;

test('a subject is named as BuildKit names it, with the digest split by algorithm', (t) => {
  t.deepEqual(subjectOf('r:5000/team/app', 'sha-1234567', 'linux/amd64', DIGEST), {
    name: 'pkg:docker/r:5000/team/app@sha-1234567?platform=linux%2Famd64',
    digest: { sha256: 'a'.repeat(64) },
  });
});

const input = {
  subject: subjectOf('r/app', 't', 'linux/amd64', DIGEST),
  builderId: 'https://builds.example/ibs',
  version: '1.2.3',
  repository: 'https://git.example/app.git',
  ref: 'main',
  commit: 'c'.repeat(40),
  buildKey: 'd'.repeat(64),
  source: { uri: `r/app@${SOURCE}`, digest: SOURCE, platformDigest: `sha256:${'e'.repeat(64)}` },
};

test('the reuse provenance is an in-toto v1 statement of SLSA v1 with the documented build type', (t) => {
  const statement = reuseProvenance({
    ...input,
    sourceProvenance: { uri: `r/app@sha256:${'f'.repeat(64)}`, digest: `sha256:${'f'.repeat(64)}` },
  });
  t.is(statement._type, STATEMENT_V1);
  t.is(statement.predicateType, SLSA_PROVENANCE_V1);
  t.deepEqual(statement.subject, [input.subject]);
  t.deepEqual(statement.predicate, {
    buildDefinition: {
      buildType: REUSE_BUILD_TYPE,
      externalParameters: {
        repository: input.repository,
        ref: 'main',
        commit: input.commit,
        buildKey: input.buildKey,
      },
      internalParameters: {},
      resolvedDependencies: [
        {
          name: 'source-image',
          uri: `r/app@${SOURCE}`,
          digest: { sha256: 'b'.repeat(64) },
          annotations: { platformManifest: `sha256:${'e'.repeat(64)}` },
        },
        {
          name: 'source-provenance',
          uri: `r/app@sha256:${'f'.repeat(64)}`,
          digest: { sha256: 'f'.repeat(64) },
        },
      ],
    },
    runDetails: {
      builder: { id: input.builderId, version: { 'image-build-service': '1.2.3' } },
      metadata: {},
    },
  });
});

test('without a source provenance the dependencies name the source image only; the output is deterministic', (t) => {
  const a = reuseProvenance(input);
  t.deepEqual(a, reuseProvenance(input));
  const deps = (a.predicate as { buildDefinition: { resolvedDependencies: unknown[] } }).buildDefinition
    .resolvedDependencies;
  t.is(deps.length, 1);
});

test('a restated statement keeps its type and predicate and names the new subject only', (t) => {
  const sbom = {
    _type: 'https://in-toto.io/Statement/v0.1',
    predicateType: 'https://spdx.dev/Document',
    subject: [{ name: 'old' }],
    predicate: { spdxVersion: 'SPDX-2.3' },
  };
  t.deepEqual(restate(sbom, input.subject), { ...sbom, subject: [input.subject] });
});

test("cosign's tag and payload for a digest; the payload verifies with the key that signed it", (t) => {
  t.is(signatureTag(DIGEST), `sha256-${'a'.repeat(64)}.sig`);
  const payload = simpleSigningPayload('r:5000/team/app', DIGEST);
  t.deepEqual(JSON.parse(payload.toString()), {
    critical: {
      identity: { 'docker-reference': 'r:5000/team/app' },
      image: { 'docker-manifest-digest': DIGEST },
      type: 'cosign container image signature',
    },
    optional: null,
  });
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signature = sign('sha256', payload, privateKey);
  t.true(verify('sha256', payload, createPublicKey(privateKey), signature));
});

test('the signature config lists every layer as the rootfs', (t) => {
  const layers = [DIGEST, SOURCE].map((digest) => ({ mediaType: 'x', digest, size: 1, annotations: {} }));
  const config = JSON.parse(signatureConfig(layers).toString()) as {
    rootfs: { diff_ids: string[] };
    history: unknown[];
  };
  t.deepEqual(config.rootfs.diff_ids, [DIGEST, SOURCE]);
  t.is(config.history.length, 2);
});
