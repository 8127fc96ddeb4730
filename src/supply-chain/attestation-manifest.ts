/**
 * Attestation manifests as BuildKit stores them in an index: an image manifest whose layers are
 * in-toto statements (annotated with their predicate type), listed in the index as platform
 * `unknown/unknown` with the `vnd.docker.reference.*` annotations naming the manifest they attest.
 * buildx imagetools and policy engines find them there.
 */
import { serviceError } from '../errors/errors.js';
import { LIMITS, type RegistryCall, type RegistryClient, sha256 } from '../registry/client.js';
import { MEDIA_TYPES } from '../registry/manifest.js';
import { putManifest, uploadBlob } from '../registry/push.js';
import type { Json } from './in-toto.js';

const IN_TOTO_MEDIA_TYPE = 'application/vnd.in-toto+json';
const PREDICATE_ANNOTATION = 'in-toto.io/predicate-type';
const REFERENCE_TYPE = 'vnd.docker.reference.type';
const REFERENCE_DIGEST = 'vnd.docker.reference.digest';
const ATTESTATION_TYPE = 'attestation-manifest';
const CONFIG_TYPE = 'application/vnd.oci.image.config.v1+json';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The index entry of the attestation manifest of `subjectDigest`, if the index has one. */
export function attestationEntryFor(entries: readonly Json[], subjectDigest: string): Json | undefined {
  return entries.find((entry) => {
    const annotations = isObject(entry.annotations) ? entry.annotations : {};
    return (
      annotations[REFERENCE_TYPE] === ATTESTATION_TYPE && annotations[REFERENCE_DIGEST] === subjectDigest
    );
  });
}

interface SourceStatement {
  readonly predicateType: string;
  readonly statement: Json;
}

export interface SourceAttestations {
  /** The predicate type of every statement of the manifest. */
  readonly predicateTypes: readonly string[];
  /** The statements whose type `wanted` accepted, fetched. */
  readonly statements: readonly SourceStatement[];
}

const predicateOf = (layer: Json): string | undefined => {
  const annotations = isObject(layer.annotations) ? layer.annotations : {};
  const type = annotations[PREDICATE_ANNOTATION];
  return layer.mediaType === IN_TOTO_MEDIA_TYPE && typeof type === 'string' ? type : undefined;
};

/** An attestation manifest's statement types, and the statements `wanted` picks (fetched). */
export async function readAttestations(
  client: RegistryClient,
  call: RegistryCall,
  manifestDigest: string,
  wanted: (predicateType: string) => boolean,
): Promise<SourceAttestations> {
  const manifest = await client.getManifest(call, manifestDigest);
  if (manifest === undefined) return { predicateTypes: [], statements: [] };
  const json: unknown = JSON.parse(manifest.body.toString('utf8'));
  const layers = isObject(json) && Array.isArray(json.layers) ? json.layers.filter(isObject) : [];
  const typed = layers.flatMap((layer) => {
    const type = predicateOf(layer);
    return type === undefined ? [] : [{ layer, type }];
  });
  const statements = await Promise.all(
    typed
      .filter(({ type }) => wanted(type))
      .map(async ({ layer, type }) => {
        const body = await client.getBlob(call, String(layer.digest), LIMITS.configBytes);
        const statement: unknown = JSON.parse(body.toString('utf8'));
        if (!isObject(statement))
          throw serviceError('REGISTRY_UNREACHABLE', {
            registry: call.ref.registry,
            reason: 'a statement is not an object',
            image: call.ref.image,
          });
        return { predicateType: type, statement };
      }),
  );
  return { predicateTypes: typed.map(({ type }) => type), statements };
}

/**
 * Uploads `statements` and an attestation manifest for `subjectDigest` (PUT by digest); returns
 * its index entry.
 */
export async function writeAttestationManifest(
  client: RegistryClient,
  call: RegistryCall,
  subjectDigest: string,
  statements: readonly Json[],
): Promise<Json> {
  const blobs = statements.map((s) => Buffer.from(JSON.stringify(s)));
  const digests = blobs.map((blob) => sha256(blob));
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'unknown',
      os: 'unknown',
      config: {},
      rootfs: { type: 'layers', diff_ids: digests },
    }),
  );
  // Every blob at once, without existence probes: the statements name this request's commit.
  const configDigest = sha256(config);
  await Promise.all([
    ...blobs.map((blob) => uploadBlob(client, call, blob, IN_TOTO_MEDIA_TYPE, { probe: false })),
    uploadBlob(client, call, config, CONFIG_TYPE, { probe: false }),
  ]);
  const layers = statements.map((statement, index) => ({
    mediaType: IN_TOTO_MEDIA_TYPE,
    digest: digests[index],
    size: blobs[index]?.length,
    annotations: { [PREDICATE_ANNOTATION]: String(statement.predicateType) },
  }));
  const body = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociManifest,
      config: { mediaType: CONFIG_TYPE, digest: configDigest, size: config.length },
      layers,
    }),
  );
  const digest = await putManifest(client, call, sha256(body), body, MEDIA_TYPES.ociManifest);
  return {
    mediaType: MEDIA_TYPES.ociManifest,
    digest,
    size: body.length,
    annotations: { [REFERENCE_DIGEST]: subjectDigest, [REFERENCE_TYPE]: ATTESTATION_TYPE },
    platform: { architecture: 'unknown', os: 'unknown' },
  };
}
