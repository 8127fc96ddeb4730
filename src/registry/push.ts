/**
 * Writing to a registry through the HTTP API v2 (the call needs push scope): a blob upload
 * (skipped when the repository already has the blob) and a manifest PUT. Failures throw
 * REGISTRY_FAILED, without any credential in them.
 */
import { serviceError } from '../errors/errors.js';
import { LIMITS, type RegistryCall, type RegistryClient, sha256 } from './client.js';
import { unexpectedAnswer } from './reference.js';

async function blobExists(client: RegistryClient, call: RegistryCall, digest: string): Promise<boolean> {
  const res = await client.request(call, 'HEAD', `${call.ref.name}/blobs/${digest}`, { maxBytes: 0 });
  if (res.status === 200) return true;
  if (res.status === 404) return false;
  throw unexpectedAnswer(call.ref, res.status);
}

/**
 * Uploads `body` as a blob (one POST, one monolithic PUT); returns its digest. `probe: false`
 * skips the existence check (a HEAD) for content that is almost always new: uploading a blob the
 * repository already has is harmless, and a round trip is saved on every other call.
 */
export async function uploadBlob(
  client: RegistryClient,
  call: RegistryCall,
  body: Buffer,
  mediaType: string,
  options: { probe: boolean } = { probe: true },
): Promise<string> {
  const digest = sha256(body);
  if (options.probe && (await blobExists(client, call, digest))) return digest;
  const { ref } = call;
  const started = await client.request(call, 'POST', `${ref.name}/blobs/uploads/`, {
    maxBytes: LIMITS.errorBytes,
  });
  const location = started.headers.location;
  if (started.status !== 202 || typeof location !== 'string') {
    throw unexpectedAnswer(ref, started.status);
  }
  let url: URL;
  try {
    url = new URL(location, `${ref.origin}/v2/`);
  } catch {
    throw serviceError('REGISTRY_UNREACHABLE', {
      registry: ref.registry,
      reason: 'invalid upload location',
      image: ref.image,
    });
  }
  url.searchParams.set('digest', digest);
  const done = await client.request(call, 'PUT', url, {
    maxBytes: LIMITS.errorBytes,
    body,
    contentType: 'application/octet-stream',
  });
  if (done.status !== 201) throw unexpectedAnswer(ref, done.status, `${ref.image} (blob ${mediaType})`);
  return digest;
}

/** PUTs a manifest under `reference` (a tag or its digest); returns the digest of the bytes. */
export async function putManifest(
  client: RegistryClient,
  call: RegistryCall,
  reference: string,
  body: Buffer,
  mediaType: string,
): Promise<string> {
  const { ref } = call;
  const res = await client.request(call, 'PUT', `${ref.name}/manifests/${reference}`, {
    maxBytes: LIMITS.errorBytes,
    body,
    contentType: mediaType,
  });
  if (res.status !== 201 && res.status !== 200) throw unexpectedAnswer(ref, res.status);
  return sha256(body);
}
