/**
 * Reads a repository snapshot (snapshot-types.ts) from the registry alone: its tags list, each
 * tag's manifest, and for the service's images the config labels of the first platform (the
 * retention labels of src/rules/image-labels.ts). Build-key and cosign tags are only resolved.
 */
import { LIMITS, type RegistryCall, type RegistryClient } from '../registry/client.js';
import { parseImageConfig, parseManifest } from '../registry/manifest.js';
import { IMAGE_LABELS } from '../rules/image-labels.js';
import type { AttachedTag, OtherTag, RepositorySnapshot, ServiceImage } from './snapshot-types.js';
import { unexpectedAnswer } from '../registry/reference.js';

const KEY_TAG = /^build-key-([0-9a-f]{64})$/;
const SIGNATURE_TAG = /^sha256-([0-9a-f]{64})\.(sig|att)$/;
/** Tags read at once. */
const CONCURRENCY = 8;
/** Pages of the tags list followed at most (a registry pages with Link). */
const MAX_PAGES = 100;

/** Every tag of the repository (following Link pages); [] when the repository is unknown. */
async function listTags(client: RegistryClient, call: RegistryCall): Promise<string[]> {
  const tags: string[] = [];
  let path: string | URL = `${call.ref.name}/tags/list`;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const res = await client.request(call, 'GET', path, { maxBytes: LIMITS.tagsBytes });
    if (res.status === 404) return tags;
    if (res.status !== 200) throw unexpectedAnswer(call.ref, res.status);
    const body = JSON.parse(res.body.toString('utf8')) as { tags?: unknown };
    if (Array.isArray(body.tags)) tags.push(...body.tags.filter((t): t is string => typeof t === 'string'));
    const link = /<([^>]+)>/.exec(String(res.headers.link ?? ''))?.[1];
    if (link === undefined) return tags;
    path = new URL(link, call.ref.origin);
  }
  return tags;
}

type TagRead = { kind: 'image'; image: ServiceImage } | { kind: 'other'; other: OtherTag } | undefined;

/** The labels of an image manifest's config, or of the first platform manifest of an index. */
async function labelsOf(
  client: RegistryClient,
  call: RegistryCall,
  body: Buffer,
  contentType: string | undefined,
): Promise<Record<string, string>> {
  const manifest = parseManifest(body, contentType);
  if (manifest === undefined) return {};
  if (manifest.kind === 'image') {
    const config = await client.getBlob(call, manifest.config.digest, LIMITS.configBytes);
    return parseImageConfig(config)?.labels ?? {};
  }
  const platform = manifest.manifests.find((d) => d.platform !== undefined && d.platform.os !== 'unknown');
  if (platform === undefined) return {};
  const child = await client.getManifest(call, platform.digest);
  return child === undefined ? {} : labelsOf(client, call, child.body, child.contentType);
}

async function readTag(client: RegistryClient, call: RegistryCall, tag: string): Promise<TagRead> {
  const fetched = await client.getManifest(call, tag);
  if (fetched === undefined) return undefined;
  const manifest = parseManifest(fetched.body, fetched.contentType);
  const children = manifest?.kind === 'index' ? manifest.manifests.map((d) => d.digest) : [];
  const labels = await labelsOf(client, call, fetched.body, fetched.contentType);
  const branch = labels[IMAGE_LABELS.branch];
  const builtMs = Date.parse(labels[IMAGE_LABELS.built] ?? '');
  if (branch === undefined || branch === '' || Number.isNaN(builtMs)) {
    return { kind: 'other', other: { tag, digest: fetched.digest, children } };
  }
  const image: ServiceImage = {
    tag,
    digest: fetched.digest,
    children,
    source: labels[IMAGE_LABELS.source] ?? '',
    branch,
    builtMs,
    namedTag: labels[IMAGE_LABELS.namedTag] ?? '',
    key: labels[IMAGE_LABELS.buildKey] ?? '',
  };
  return { kind: 'image', image };
}

async function resolveAttached(
  client: RegistryClient,
  call: RegistryCall,
  tag: string,
  of: string,
): Promise<AttachedTag | undefined> {
  const head = await client.headManifest(call, tag);
  return head.status === 200 && head.digest !== undefined ? { tag, digest: head.digest, of } : undefined;
}

/** Runs `work` over `items`, CONCURRENCY at a time. */
async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += CONCURRENCY) {
    out.push(...(await Promise.all(items.slice(i, i + CONCURRENCY).map(work))));
  }
  return out;
}

/** The snapshot of the call's repository (`repository`: `<registry>/<name>` as the answer names it). */
export async function readSnapshot(
  client: RegistryClient,
  call: RegistryCall,
  repository: string,
): Promise<RepositorySnapshot> {
  const tags = await listTags(client, call);
  const keyTags = tags.filter((t) => KEY_TAG.test(t));
  const signatureTags = tags.filter((t) => SIGNATURE_TAG.test(t));
  const plain = tags.filter((t) => !KEY_TAG.test(t) && !SIGNATURE_TAG.test(t));
  const [reads, keys, signatures] = await Promise.all([
    inBatches(plain, (tag) => readTag(client, call, tag)),
    inBatches(keyTags, (tag) => resolveAttached(client, call, tag, KEY_TAG.exec(tag)?.[1] ?? '')),
    inBatches(signatureTags, (tag) =>
      resolveAttached(client, call, tag, `sha256:${SIGNATURE_TAG.exec(tag)?.[1] ?? ''}`),
    ),
  ]);
  return {
    repository,
    images: reads.flatMap((r) => (r?.kind === 'image' ? [r.image] : [])),
    others: reads.flatMap((r) => (r?.kind === 'other' ? [r.other] : [])),
    keyTags: keys.filter((k): k is AttachedTag => k !== undefined),
    signatureTags: signatures.filter((s): s is AttachedTag => s !== undefined),
  };
}
