/**
 * Helpers of the build secrets tests (docs/secrets.md): every byte of a pushed image over the
 * registry API (index, manifests, configs, layer blobs as stored and unpacked) to search for a
 * canary and read /npmrc.sha256, and a sampler of the argv and environment of a process tree.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { cmdlineOf, descendantPids } from './processes.js';
import { MANIFEST_ACCEPT, registryFetch } from '../stack/registry-client.js';

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

export interface ImageBytes {
  /** Every manifest, index and config document, as served. */
  readonly documents: string[];
  /** Every layer blob of every manifest: as stored, and unpacked (gzip) when it is compressed. */
  readonly layers: Buffer[];
  /** The files of the image manifests' layers (path without leading `/` -> content). */
  readonly files: Map<string, Buffer>;
}

async function blob(registry: string, name: string, digest: string): Promise<Buffer> {
  const res = await registryFetch(registry, `/v2/${name}/blobs/${digest}`);
  if (res.status !== 200) throw new Error(`blob ${digest} answered ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/** The regular files of a tar stream (ustar: 512-byte headers, name + prefix fields). */
export function tarFiles(tar: Buffer, into: Map<string, Buffer>): void {
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (from: number, length: number): string =>
      header.toString('utf8', from, from + length).replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const prefix = field(345, 155);
    const path = (prefix === '' ? '' : `${prefix}/`) + field(0, 100);
    const type = field(156, 1);
    if (type === '0' || type === '')
      into.set(path.replace(/^\.?\//, ''), tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
}

/** Everything the registry holds for `<name>:<tag>`, every manifest of an index followed. */
export async function imageBytes(registry: string, name: string, tag: string): Promise<ImageBytes> {
  const out: ImageBytes = { documents: [], layers: [], files: new Map() };
  const visit = async (ref: string): Promise<void> => {
    const res = await registryFetch(registry, `/v2/${name}/manifests/${ref}`, {
      headers: { accept: MANIFEST_ACCEPT },
    });
    if (res.status !== 200) throw new Error(`manifest ${ref} answered ${res.status}`);
    const text = await res.text();
    out.documents.push(text);
    const doc = JSON.parse(text) as {
      manifests?: { digest: string }[];
      config?: { digest: string };
      layers?: { digest: string; mediaType: string }[];
    };
    for (const entry of doc.manifests ?? []) await visit(entry.digest);
    if (doc.config !== undefined)
      out.documents.push((await blob(registry, name, doc.config.digest)).toString());
    for (const layer of doc.layers ?? []) {
      const stored = await blob(registry, name, layer.digest);
      out.layers.push(stored);
      if (!layer.mediaType.includes('tar')) continue;
      const tar = layer.mediaType.endsWith('gzip') ? gunzipSync(stored) : stored;
      out.layers.push(tar);
      tarFiles(tar, out.files);
    }
  };
  await visit(tag);
  return out;
}

/** Where `canary` occurs in the image (empty: nowhere). */
export function imageLeaks(image: ImageBytes, canary: string): string[] {
  const found: string[] = [];
  image.documents.forEach((doc, i) => {
    if (doc.includes(canary)) found.push(`document ${i}`);
  });
  image.layers.forEach((layer, i) => {
    if (layer.includes(canary)) found.push(`layer ${i}`);
  });
  return found;
}

/** Samples the argv and environment of every process below this one, every 20 ms, until stopped. */
export function sampleProcesses(canaries: readonly string[]): {
  stop: () => { leaks: string[]; commands: Set<string> };
} {
  const leaks: string[] = [];
  const commands = new Set<string>();
  const sample = (): void => {
    for (const pid of descendantPids()) {
      const cmdline = cmdlineOf(pid);
      if (cmdline === '') continue;
      commands.add(cmdline.split(' ').slice(0, 3).join(' '));
      let environ = '';
      try {
        environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      } catch {
        // exited meanwhile
      }
      for (const canary of canaries) {
        if (cmdline.includes(canary)) leaks.push(`argv of ${cmdline.slice(0, 80)}`);
        if (environ.includes(canary)) leaks.push(`environment of ${cmdline.slice(0, 80)}`);
      }
    }
  };
  const timer = setInterval(sample, 20);
  return {
    stop: () => {
      clearInterval(timer);
      return { leaks, commands };
    },
  };
}
