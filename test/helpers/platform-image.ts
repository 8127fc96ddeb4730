/**
 * One platform's entries of a pushed multi-platform image, over the registry API: the index's
 * platform manifests and attestations, and a file of one platform's layers (what a RUN step wrote).
 */
import { gunzipSync } from 'node:zlib';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';
import { tarFiles } from './image-bytes.js';

export interface IndexEntry {
  readonly digest: string;
  readonly platform: string;
  /** The manifest an attestation describes (`vnd.docker.reference.digest`). */
  readonly attests?: string;
}

async function json(registry: string, path: string): Promise<Record<string, unknown>> {
  const res = await registryFetch(registry, path, { headers: { accept: MANIFEST_ACCEPT } });
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/** The entries of the index `<name>:<tag>`, each with its platform as os/arch[/variant]. */
export async function indexEntries(registry: string, name: string, tag: string): Promise<IndexEntry[]> {
  const index = await json(registry, `/v2/${name}/manifests/${tag}`);
  const manifests = (index.manifests ?? []) as {
    digest: string;
    platform?: { os: string; architecture: string; variant?: string };
    annotations?: Record<string, string>;
  }[];
  return manifests.map((m) => {
    const p = m.platform ?? { os: 'unknown', architecture: 'unknown' };
    const attests = m.annotations?.['vnd.docker.reference.digest'];
    return {
      digest: m.digest,
      platform: [p.os, p.architecture, ...(p.variant ? [p.variant] : [])].join('/'),
      ...(attests === undefined ? {} : { attests }),
    };
  });
}

/** The file at `path` (no leading /) in the layers of the manifest `digest`, as text. */
export async function fileOf(registry: string, name: string, digest: string, path: string): Promise<string> {
  const manifest = (await json(registry, `/v2/${name}/manifests/${digest}`)) as {
    layers?: { digest: string; mediaType: string }[];
  };
  const files = new Map<string, Buffer>();
  for (const layer of manifest.layers ?? []) {
    const res = await registryFetch(registry, `/v2/${name}/blobs/${layer.digest}`);
    const stored = Buffer.from(await res.arrayBuffer());
    tarFiles(layer.mediaType.endsWith('gzip') ? gunzipSync(stored) : stored, files);
  }
  const file = files.get(path);
  if (file === undefined) throw new Error(`${path} is not in ${digest}`);
  return file.toString('utf8');
}
