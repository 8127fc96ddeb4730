/**
 * What the service adds to every image it answers with: on a reuse, attestations re-issued for
 * the manifests it writes (its own SLSA provenance, the source's SBOM restated), and with a key,
 * a cosign signature of the answered digest. Configured once at start-up.
 */
import type { Config, ProvenanceMode, SigningKey } from '../config/types.js';
import type { RegistryCall, RegistryClient } from '../registry/client.js';
import type { AttestHook, RelabelledPlatform } from '../registry/relabel.js';
import {
  attestationEntryFor,
  readAttestations,
  type SourceAttestations,
  writeAttestationManifest,
} from './attestation-manifest.js';
import {
  type Json,
  reuseProvenance,
  restate,
  SLSA_PROVENANCE_PREFIX,
  SPDX_DOCUMENT,
  subjectOf,
} from './in-toto.js';
import { ImageSigner } from './signer.js';
import { signatureTag } from './simple-signing.js';

export interface SupplyChainOptions {
  readonly provenance: ProvenanceMode;
  readonly builderId: string;
  readonly version: string;
  readonly signing?: SigningKey;
}

/** What a reuse knows about the image it writes. */
export interface ReuseContext {
  readonly repository: string;
  readonly ref: string;
  readonly commit: string;
  readonly buildKey: string;
  /** The image derived from, `<registry>/<name>@<digest>`, and that digest. */
  readonly sourceImage: string;
  readonly sourceDigest: string;
}

const wanted = (type: string): boolean => type === SPDX_DOCUMENT;

export class SupplyChain {
  private readonly signer: ImageSigner | undefined;

  constructor(private readonly options: SupplyChainOptions) {
    this.signer = options.signing === undefined ? undefined : new ImageSigner(options.signing);
  }

  /** The hook that re-issues attestations on a reuse (none with provenance off); `notes` get one line per platform. */
  reissue(
    client: RegistryClient,
    call: RegistryCall,
    context: ReuseContext,
    notes: string[],
  ): AttestHook | undefined {
    if (this.options.provenance === 'off') return undefined;
    return async (source, written) => {
      // The source's attestations are read while the new manifest is prepared.
      const entry = attestationEntryFor(source.sourceEntries, source.sourceDigest);
      const [found, platform] = await Promise.all([
        entry === undefined
          ? { predicateTypes: [], statements: [] }
          : readAttestations(client, call, String(entry.digest), wanted),
        written,
      ]);
      const statements = this.statementsFor(call, context, platform, { entry, found }, notes);
      return [await writeAttestationManifest(client, call, platform.digest, statements)];
    };
  }

  private statementsFor(
    call: RegistryCall,
    context: ReuseContext,
    written: RelabelledPlatform,
    source: { entry: Json | undefined; found: SourceAttestations },
    notes: string[],
  ): Json[] {
    const { ref } = call;
    const { entry, found } = source;
    const subject = subjectOf(ref.target.repository, ref.tag ?? '', written.platform, written.digest);
    const hasProvenance = found.predicateTypes.some((type) => type.startsWith(SLSA_PROVENANCE_PREFIX));
    const sboms = found.statements
      .filter((s) => s.predicateType === SPDX_DOCUMENT)
      .map((s) => restate(s.statement, subject));
    const provenance = reuseProvenance({
      subject,
      builderId: this.options.builderId,
      version: this.options.version,
      repository: context.repository,
      ref: context.ref,
      commit: context.commit,
      buildKey: context.buildKey,
      source: {
        uri: context.sourceImage,
        digest: context.sourceDigest,
        platformDigest: written.sourceDigest,
      },
      ...(entry !== undefined && hasProvenance
        ? {
            sourceProvenance: {
              uri: ref.target.atDigest(String(entry.digest)),
              digest: String(entry.digest),
            },
          }
        : {}),
    });
    notes.push(
      entry === undefined
        ? `# ${written.platform}: the source image has no attestations (built by an older version?): provenance of this service only\n`
        : `# ${written.platform}: provenance re-issued for ${written.digest}` +
            (sboms.length > 0 ? `, ${sboms.length} SBOM(s) carried over\n` : '\n'),
    );
    return [provenance, ...sboms];
  }

  /** Signs `digest` when a key is configured; the line for the log, or undefined without a key. */
  async sign(client: RegistryClient, call: RegistryCall, digest: string): Promise<string | undefined> {
    if (this.signer === undefined) return undefined;
    const outcome = await this.signer.sign(client, call, digest);
    return `# ${outcome === 'signed' ? 'signed' : 'already signed'} ${digest} (cosign signature ${call.ref.target.withTag(signatureTag(digest)).image})\n`;
  }
}

/** The supply chain of a loaded configuration. */
export function supplyChainOf(config: Pick<Config, 'build' | 'version' | 'signing'>): SupplyChain {
  return new SupplyChain({
    provenance: config.build.provenance,
    builderId: config.build.provenanceBuilderId,
    version: config.version,
    ...(config.signing === undefined ? {} : { signing: config.signing }),
  });
}
