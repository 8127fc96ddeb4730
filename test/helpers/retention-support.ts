/**
 * Helpers of the retention tests (their repositories come from pushed-repo.ts): a definition that
 * builds and keys, and registry read-backs: tags, manifests, everything a tag reaches.
 */
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';
import { stack } from './build-support.js';

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

/** A definition with a local feature (so the build runs the CLI and BuildKit), keyed by its files. */
export const keyedDefinition = (): Record<string, string> => ({
  '.devcontainer/devcontainer.json': json({ image: stack.BASE_IMAGE_ANON, features: { './hello': {} } }),
  '.devcontainer/hello/devcontainer-feature.json': json({ id: 'hello', version: '1.0.0', name: 'hello' }),
  '.devcontainer/hello/install.sh': '#!/bin/sh\nset -e\necho hello > /etc/hello-retention\n',
});

/** Every tag of `<registry>/<name>` (sorted; [] when the repository is unknown). */
export async function registryTags(registry: string, name: string): Promise<string[]> {
  const res = await registryFetch(registry, `/v2/${name}/tags/list?n=10000`);
  if (res.status === 404) return [];
  const body = (await res.json()) as { tags?: string[] | null };
  return [...(body.tags ?? [])].sort();
}

/** The status of a manifest (by tag or digest) and, when there, its digest and JSON. */
export async function manifestOf(
  registry: string,
  name: string,
  reference: string,
): Promise<{ status: number; digest?: string; json?: Record<string, unknown> }> {
  const res = await registryFetch(registry, `/v2/${name}/manifests/${reference}`, {
    headers: { accept: MANIFEST_ACCEPT },
  });
  if (res.status !== 200) return { status: res.status };
  const json = (await res.json()) as Record<string, unknown>;
  return { status: 200, digest: res.headers.get('docker-content-digest') ?? '', json };
}

/** Every tag with the digest it names (what a plan must leave as it was). */
export async function tagDigests(registry: string, name: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const tag of await registryTags(registry, name)) {
    out[tag] = (await manifestOf(registry, name, tag)).digest ?? 'absent';
  }
  return out;
}

type Descriptor = { digest: string };

/**
 * Every manifest and blob `tag` reaches (index, platform and attestation manifests, configs,
 * layers), each with the status the registry answers for it.
 */
export async function reachable(registry: string, name: string, tag: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const visit = async (reference: string): Promise<void> => {
    const m = await manifestOf(registry, name, reference);
    out.set(`manifest ${reference}`, m.status);
    if (m.json === undefined) return;
    const children = (m.json.manifests as Descriptor[] | undefined) ?? [];
    for (const child of children) await visit(child.digest);
    const blobs = [
      m.json.config as Descriptor | undefined,
      ...((m.json.layers as Descriptor[] | undefined) ?? []),
    ];
    for (const blob of blobs.filter((b): b is Descriptor => b !== undefined)) {
      const res = await registryFetch(registry, `/v2/${name}/blobs/${blob.digest}`, { method: 'HEAD' });
      out.set(`blob ${blob.digest}`, res.status);
    }
  };
  await visit(tag);
  return out;
}
