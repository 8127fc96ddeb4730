import test from 'ava';
import { isAttestation, relabelConfig } from '../../../../src/registry/relabel.js';

test('relabelling sets the given labels and keeps every other field', (t) => {
  const config = {
    architecture: 'amd64',
    os: 'linux',
    config: {
      Env: ['A=1'],
      Labels: { 'devcontainer.metadata': '[{}]', 'org.opencontainers.image.revision': 'old' },
    },
    rootfs: { type: 'layers', diff_ids: ['sha256:1'] },
  };
  t.deepEqual(relabelConfig(config, { 'org.opencontainers.image.revision': 'new' }), {
    ...config,
    config: {
      Env: ['A=1'],
      Labels: { 'devcontainer.metadata': '[{}]', 'org.opencontainers.image.revision': 'new' },
    },
  });
  t.deepEqual(relabelConfig({ os: 'linux' }, { a: 'b' }), { os: 'linux', config: { Labels: { a: 'b' } } });
});

test('attestation entries of an index are recognised', (t) => {
  t.true(isAttestation({ annotations: { 'vnd.docker.reference.type': 'attestation-manifest' } }));
  t.true(isAttestation({ platform: { os: 'unknown', architecture: 'unknown' } }));
  t.false(isAttestation({ platform: { os: 'linux', architecture: 'amd64' } }));
});
