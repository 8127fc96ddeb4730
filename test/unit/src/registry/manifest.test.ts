import test from 'ava';
import {
  MANIFEST_ACCEPT,
  MEDIA_TYPES,
  parseImageConfig,
  parseManifest,
} from '../../../../src/registry/manifest.js';

const D = (c: string): string => `sha256:${c.repeat(64)}`;
const j = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));

test('MANIFEST_ACCEPT names the OCI index, Docker list, OCI manifest and Docker v2 schema2', (t) => {
  for (const type of Object.values(MEDIA_TYPES)) t.true(MANIFEST_ACCEPT.includes(type), type);
});

test('parseManifest tells indexes from image manifests by mediaType, Content-Type or shape', (t) => {
  const index = {
    manifests: [{ digest: D('a'), platform: { os: 'linux', architecture: 'amd64' } }, { digest: 'bad' }],
  };
  const image = { config: { digest: D('c') }, layers: [{ digest: D('l') }] };
  const rows: [Buffer, string | undefined, 'index' | 'image' | undefined][] = [
    [j({ mediaType: MEDIA_TYPES.ociIndex, ...index }), undefined, 'index'],
    [j(index), MEDIA_TYPES.dockerList, 'index'],
    [j(index), undefined, 'index'],
    [j({ mediaType: MEDIA_TYPES.dockerManifest, ...image }), undefined, 'image'],
    [j(image), `${MEDIA_TYPES.ociManifest}; charset=utf-8`, 'image'],
    [j(image), undefined, 'image'],
    [
      j({ schemaVersion: 1, fsLayers: [] }),
      'application/vnd.docker.distribution.manifest.v1+prettyjws',
      undefined,
    ],
    [j({ mediaType: MEDIA_TYPES.ociManifest, config: { digest: 'nope' } }), undefined, undefined],
    [Buffer.from('not json'), undefined, undefined],
    [j([1, 2]), undefined, undefined],
  ];
  for (const [body, contentType, kind] of rows)
    t.is(parseManifest(body, contentType)?.kind, kind, body.toString());
  const parsed = parseManifest(j(index), undefined);
  t.deepEqual(parsed, {
    kind: 'index',
    manifests: [{ digest: D('a'), platform: { os: 'linux', architecture: 'amd64' } }],
  });
});

test('parseImageConfig reads the labels (strings only) and the platform', (t) => {
  const cfg = parseImageConfig(
    j({ os: 'linux', architecture: 'arm', variant: 'v7', config: { Labels: { a: 'x', n: 1 } } }),
  );
  t.deepEqual(cfg, { labels: { a: 'x' }, platform: { os: 'linux', architecture: 'arm', variant: 'v7' } });
  t.deepEqual(parseImageConfig(j({ config: { Labels: null } })), { labels: {} });
  t.is(parseImageConfig(Buffer.from('[')), undefined);
});
