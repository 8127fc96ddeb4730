/**
 * cosign's signature format (pure): a "simple signing" payload naming the signed digest, stored
 * as a layer of an OCI manifest tagged `sha256-<hex>.sig` in the image's repository, with the
 * signature (base64 DER ECDSA over the payload) in the layer's annotation. `cosign verify --key`
 * reads exactly this.
 */

export const SIMPLE_SIGNING_MEDIA_TYPE = 'application/vnd.dev.cosign.simplesigning.v1+json';
export const SIGNATURE_ANNOTATION = 'dev.cosignproject.cosign/signature';

/** The tag cosign looks for the signatures of `digest` under. */
export function signatureTag(digest: string): string {
  return `${digest.replace(':', '-')}.sig`;
}

/** The payload cosign signs for `digest` of `repository` (`<registry>/<name>`). */
export function simpleSigningPayload(repository: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { 'docker-reference': repository },
        image: { 'docker-manifest-digest': digest },
        type: 'cosign container image signature',
      },
      optional: null,
    }),
  );
}

export interface SignatureLayer {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations: Readonly<Record<string, string>>;
}

/** The config blob of a signature manifest: its layers as the rootfs (as cosign writes it). */
export function signatureConfig(layers: readonly SignatureLayer[]): Buffer {
  return Buffer.from(
    JSON.stringify({
      architecture: '',
      os: '',
      created: '0001-01-01T00:00:00Z',
      config: {},
      history: layers.map(() => ({ created: '0001-01-01T00:00:00Z' })),
      rootfs: { type: 'layers', diff_ids: layers.map((layer) => layer.digest) },
    }),
  );
}
