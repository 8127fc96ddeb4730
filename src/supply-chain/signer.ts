/**
 * Signs an image digest in cosign's format (simple-signing.ts) through the registry API: the
 * payload and a config blob uploaded, then the `sha256-<hex>.sig` manifest written with every
 * signature it already held plus this one. A digest this key already signed is left as is.
 */
import { sign, verify } from 'node:crypto';
import type { SigningKey } from '../config/types.js';
import { serviceError } from '../errors/errors.js';
import { LIMITS, type RegistryCall, type RegistryClient, sha256 } from '../registry/client.js';
import { MEDIA_TYPES } from '../registry/manifest.js';
import { putManifest, uploadBlob } from '../registry/push.js';
import {
  SIGNATURE_ANNOTATION,
  SIMPLE_SIGNING_MEDIA_TYPE,
  type SignatureLayer,
  signatureConfig,
  signatureTag,
  simpleSigningPayload,
} from './simple-signing.js';

const CONFIG_TYPE = 'application/vnd.oci.image.config.v1+json';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function layersOf(body: Buffer, call: RegistryCall): SignatureLayer[] {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw serviceError('REGISTRY_UNREACHABLE', {
      registry: call.ref.registry,
      reason: 'the signature manifest is not JSON',
      image: call.ref.image,
    });
  }
  const layers = isObject(json) && Array.isArray(json.layers) ? json.layers.filter(isObject) : [];
  return layers.map((layer) => ({
    mediaType: String(layer.mediaType),
    digest: String(layer.digest),
    size: Number(layer.size),
    annotations: isObject(layer.annotations) ? (layer.annotations as Record<string, string>) : {},
  }));
}

export type SignOutcome = 'signed' | 'already signed';

export class ImageSigner {
  constructor(private readonly key: SigningKey) {}

  /** Whether `layer` is `payload` signed by this key. */
  private signedHere(layer: SignatureLayer, payloadDigest: string, payload: Buffer): boolean {
    const signature = layer.annotations[SIGNATURE_ANNOTATION];
    if (layer.digest !== payloadDigest || signature === undefined) return false;
    return verify('sha256', payload, this.key.privateKey, Buffer.from(signature, 'base64'));
  }

  /** Signs `digest` of the call's repository (the call needs push scope). */
  async sign(client: RegistryClient, call: RegistryCall, digest: string): Promise<SignOutcome> {
    const payload = simpleSigningPayload(call.ref.target.repository, digest);
    const layer: SignatureLayer = {
      mediaType: SIMPLE_SIGNING_MEDIA_TYPE,
      digest: sha256(payload),
      size: payload.length,
      annotations: {
        [SIGNATURE_ANNOTATION]: sign('sha256', payload, this.key.privateKey).toString('base64'),
      },
    };
    // The blobs of a first signature go up while the signatures already there are read (usually none).
    const alone = signatureConfig([layer]);
    const [existing] = await Promise.all([
      client.getManifest(call, signatureTag(digest)),
      uploadBlob(client, call, payload, SIMPLE_SIGNING_MEDIA_TYPE, { probe: false }),
      uploadBlob(client, call, alone, CONFIG_TYPE, { probe: false }),
    ]);
    const layers = existing === undefined ? [] : layersOf(existing.body, call);
    if (layers.some((l) => this.signedHere(l, layer.digest, payload))) return 'already signed';
    const all = [...layers, layer];
    const config = layers.length === 0 ? alone : signatureConfig(all);
    if (layers.length > 0) await uploadBlob(client, call, config, CONFIG_TYPE, { probe: false });
    await this.writeManifest(client, call, digest, config, all);
    return 'signed';
  }

  private async writeManifest(
    client: RegistryClient,
    call: RegistryCall,
    digest: string,
    config: Buffer,
    layers: readonly SignatureLayer[],
  ): Promise<void> {
    const body = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MEDIA_TYPES.ociManifest,
        config: { mediaType: CONFIG_TYPE, digest: sha256(config), size: config.length },
        layers,
      }),
    );
    if (body.length > LIMITS.manifestBytes)
      throw serviceError('REGISTRY_UNREACHABLE', {
        registry: call.ref.registry,
        reason: 'too many signatures',
        image: call.ref.image,
      });
    await putManifest(client, call, signatureTag(digest), body, MEDIA_TYPES.ociManifest);
  }
}
