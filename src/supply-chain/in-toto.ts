/**
 * The in-toto statements a reuse writes (pure): the service's SLSA v1 provenance for the image it
 * derived, and a source statement (an SBOM) restated for the new subject. Formats and the
 * documented `buildType` are in docs/supply-chain.md.
 */

export const STATEMENT_V1 = 'https://in-toto.io/Statement/v1';
export const SLSA_PROVENANCE_V1 = 'https://slsa.dev/provenance/v1';
export const SLSA_PROVENANCE_PREFIX = 'https://slsa.dev/provenance/';
export const SPDX_DOCUMENT = 'https://spdx.dev/Document';
/** `buildType` of a provenance that says "reused from an earlier build of the same inputs". */
export const REUSE_BUILD_TYPE = 'urn:image-build-service:build-type:reuse:v1';

export type Json = Record<string, unknown>;

export interface Subject {
  readonly name: string;
  readonly digest: Readonly<Record<string, string>>;
}

/** The subject of one platform manifest, named as BuildKit names it. */
export function subjectOf(image: string, tag: string, platform: string, digest: string): Subject {
  const [algorithm = 'sha256', hex = ''] = digest.split(':');
  return {
    name: `pkg:docker/${image}@${tag}?platform=${encodeURIComponent(platform)}`,
    digest: { [algorithm]: hex },
  };
}

export interface ReuseProvenanceInput {
  readonly subject: Subject;
  readonly builderId: string;
  readonly version: string;
  readonly repository: string;
  readonly ref: string;
  readonly commit: string;
  readonly buildKey: string;
  /** The image derived from (`<registry>/<name>@<digest>`, that digest, its platform manifest's). */
  readonly source: { readonly uri: string; readonly digest: string; readonly platformDigest: string };
  /** The source's own provenance attestation manifest, when it has one. */
  readonly sourceProvenance?: { readonly uri: string; readonly digest: string };
}

const resource = (name: string, uri: string, digest: string, annotations?: Json): Json => {
  const [algorithm = 'sha256', hex = ''] = digest.split(':');
  return { name, uri, digest: { [algorithm]: hex }, ...(annotations === undefined ? {} : { annotations }) };
};

/** The service's own SLSA v1 provenance for a reused image (deterministic: no timestamps). */
export function reuseProvenance(input: ReuseProvenanceInput): Json {
  const { source } = input;
  const dependencies = [
    resource('source-image', source.uri, source.digest, { platformManifest: source.platformDigest }),
  ];
  if (input.sourceProvenance !== undefined) {
    const { uri, digest } = input.sourceProvenance;
    dependencies.push(resource('source-provenance', uri, digest));
  }
  return {
    _type: STATEMENT_V1,
    subject: [input.subject],
    predicateType: SLSA_PROVENANCE_V1,
    predicate: {
      buildDefinition: {
        buildType: REUSE_BUILD_TYPE,
        externalParameters: {
          repository: input.repository,
          ref: input.ref,
          commit: input.commit,
          buildKey: input.buildKey,
        },
        internalParameters: {},
        resolvedDependencies: dependencies,
      },
      runDetails: {
        builder: { id: input.builderId, version: { 'image-build-service': input.version } },
        metadata: {},
      },
    },
  };
}

/** A source statement (its type and predicate kept) about `subject` instead. */
export function restate(statement: Json, subject: Subject): Json {
  return { ...statement, subject: [subject] };
}
