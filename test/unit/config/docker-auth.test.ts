import test from 'ava';
import { authKeyHost, findRegistryAuth } from '../../../src/config/docker-auth.js';
import type { DockerConfigDocument } from '../../../src/config/types.js';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

test('authKeyHost strips scheme, path and case', (t) => {
  const rows: [string, string][] = [
    ['https://index.docker.io/v1/', 'index.docker.io'],
    ['http://127.0.0.1:5000', '127.0.0.1:5000'],
    ['Registry.Example.com:443/some/path', 'registry.example.com:443'],
    ['ghcr.io', 'ghcr.io'],
  ];
  for (const [key, host] of rows) t.is(authKeyHost(key), host, key);
});

const doc: DockerConfigDocument = {
  auths: {
    'https://index.docker.io/v1/': { auth: b64('hubuser:hub:pass') },
    'http://127.0.0.1:5000/v2/': { auth: b64('plain:pw') },
    '127.0.0.1:6000': { username: 'fielduser', password: 'fieldpw' },
    'https://127.0.0.1:6000': { auth: b64('schemed:pw') },
    'GHCR.io': { auth: b64('gh:tok') },
    'empty.example': { auth: '' },
    'nocolon.example': { auth: b64('justuser') },
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
