import test from 'ava';
import { findRegistryAuth } from '../../../../src/registry/docker-auth.js';
import type { DockerConfigDocument } from '../../../../src/config/types.js';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

const doc: DockerConfigDocument = {
  auths: {
    'https://index.docker.io/v1/': { auth: b64('hubuser:hub:pass') },
    'http://127.0.0.1:5000/v2/': { auth: b64('plain:pw') },
    '127.0.0.1:6000': { username: 'fielduser', password: 'fieldpw' },
    'https://127.0.0.1:6000': { auth: b64('schemed:pw') },
    'GHCR.io': { auth: b64('gh:tok') },
    'empty.example': { auth: '' },
    'nocolon.example': { auth: b64('justuser') },
    // never matched by a lookup: only a host counts
    '127.0.0.1:6000/team': { auth: b64('pathkey:pw') },
  },
};

test('findRegistryAuth matches keys the way docker does', (t) => {
  const rows: [string, { username: string; password: string } | undefined][] = [
    ['registry-1.docker.io', { username: 'hubuser', password: 'hub:pass' }],
    ['docker.io', { username: 'hubuser', password: 'hub:pass' }],
    ['index.docker.io', { username: 'hubuser', password: 'hub:pass' }],
    ['127.0.0.1:5000', { username: 'plain', password: 'pw' }],
    // the exact key wins over one that matches only after normalisation
    ['127.0.0.1:6000', { username: 'fielduser', password: 'fieldpw' }],
    ['ghcr.io', { username: 'gh', password: 'tok' }],
    // by host: a registry with a namespace path authenticates at its host
    ['ghcr.io/org', { username: 'gh', password: 'tok' }],
    ['127.0.0.1:6000/team/sub', { username: 'fielduser', password: 'fieldpw' }],
    // a key that carries the same path is no exact match: the lookup is by host only
    ['127.0.0.1:6000/team', { username: 'fielduser', password: 'fieldpw' }],
    ['docker.io/myorg', { username: 'hubuser', password: 'hub:pass' }],
    ['127.0.0.1:5001', undefined],
    ['empty.example', undefined],
    ['nocolon.example', undefined],
    ['example.com', undefined],
  ];
  for (const [host, want] of rows) t.deepEqual(findRegistryAuth(doc, host), want, host);
});

test('findRegistryAuth tolerates an empty or missing document', (t) => {
  t.is(findRegistryAuth({ auths: {} }, 'docker.io'), undefined);
  t.is(findRegistryAuth(undefined, 'docker.io'), undefined);
});
