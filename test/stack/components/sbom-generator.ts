// An SBOM generator image for `buildx build --attest type=sbom,generator=<SBOM_GENERATOR_IMAGE>`:
// BuildKit's default scanner image cannot be fetched here. It follows BuildKit's SBOM scanner
// protocol (moby/buildkit docs/attestations/sbom-protocol.md): it gets the rootfs to scan in
// BUILDKIT_SCAN_SOURCE (and extra contexts under BUILDKIT_SCAN_SOURCE_EXTRAS) and writes
// `<basename>.spdx.json` into BUILDKIT_SCAN_DESTINATION. BuildKit 0.13 wants that file to be an
// in-toto Statement (predicateType https://spdx.dev/Document, subject []) around the SPDX document.
// Built from the busybox base (amd64 + 386) and pushed to the anonymous registry; the tag is the
// hash of its content, so a changed script gives a new image.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Layout } from '../layout.js';
import { baseEnv, run } from '../proc.js';
import { MANIFEST_ACCEPT, registryFetch } from '../registry-client.js';
import type { State } from '../state.js';
import { baseImage } from './base-image.js';
import { STACK_BUILDER_NAME } from './builder.js';
import { registryHost } from './registries.js';
import type { Component, Ctx } from './types.js';

export const SBOM_GENERATOR_REPOSITORY = 'dev/sbom-generator';
/** The SPDX creator the generator writes: `Tool: <this>`. */
export const SBOM_GENERATOR_TOOL = 'ibs-stack-sbom-generator-1';

// busybox sh. One package per scanned tree, naming how many regular files it holds.
const SCRIPT = `#!/bin/sh
set -eu
scan() {
  src=$1
  name=$(basename "$src")
  files=$(find "$src" -xdev -type f 2>/dev/null | wc -l)
  id=$(od -An -tx1 -N8 /dev/urandom | tr -d ' \\n')
  cat >"$BUILDKIT_SCAN_DESTINATION/$name.spdx.json" <<SPDX
{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://spdx.dev/Document","subject":[],
"predicate":{"spdxVersion":"SPDX-2.3","dataLicense":"CC0-1.0","SPDXID":"SPDXRef-DOCUMENT",
"name":"$name","documentNamespace":"https://ibs-stack.invalid/spdx/$name-$id",
"creationInfo":{"created":"$(date -u +%Y-%m-%dT%H:%M:%SZ)","creators":["Tool: ${SBOM_GENERATOR_TOOL}"]},
"packages":[{"name":"$name","SPDXID":"SPDXRef-Package-scanned","versionInfo":"$files files",
"downloadLocation":"NOASSERTION","filesAnalyzed":false,"comment":"$files regular files scanned"}],
"relationships":[{"spdxElementId":"SPDXRef-DOCUMENT","relationshipType":"DESCRIBES",
"relatedSpdxElement":"SPDXRef-Package-scanned"}]}}
SPDX
}
scan "$BUILDKIT_SCAN_SOURCE"
if [ -n "\${BUILDKIT_SCAN_SOURCE_EXTRAS:-}" ] && [ -d "$BUILDKIT_SCAN_SOURCE_EXTRAS" ]; then
  for extra in "$BUILDKIT_SCAN_SOURCE_EXTRAS"/*; do
    if [ -d "$extra" ]; then scan "$extra"; fi
  done
fi
`;

function dockerfile(s: State): string {
  return `FROM ${baseImage(s, 'anon')}\nCOPY --chmod=755 scan /bin/ibs-sbom-scan\nENTRYPOINT ["/bin/ibs-sbom-scan"]\n`;
}

function tag(s: State): string {
  return crypto.createHash('sha256').update(dockerfile(s)).update(SCRIPT).digest('hex').slice(0, 12);
}

export function sbomGeneratorImage(s: State): string {
  return `${registryHost(s, 'anon')}/${SBOM_GENERATOR_REPOSITORY}:${tag(s)}`;
}

async function present(s: State): Promise<boolean> {
  const res = await registryFetch(
    registryHost(s, 'anon'),
    `/v2/${SBOM_GENERATOR_REPOSITORY}/manifests/${tag(s)}`,
    { method: 'HEAD', headers: { accept: MANIFEST_ACCEPT } },
  );
  return res.status === 200;
}

async function buildAndPush(l: Layout, s: State): Promise<void> {
  const dir = path.join(l.root, 'sbom-generator');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'Dockerfile'), dockerfile(s));
  fs.writeFileSync(path.join(dir, 'scan'), SCRIPT, { mode: 0o755 });
  const args = ['buildx', 'build', '--builder', STACK_BUILDER_NAME, '--progress', 'plain'];
  args.push('--platform', 'linux/amd64,linux/386', '--push', '-t', sbomGeneratorImage(s), dir);
  await run('docker', args, { env: baseEnv({ DOCKER_CONFIG: l.dockerConfig }), timeoutMs: 180_000 });
  if (!(await present(s))) throw new Error(`${sbomGeneratorImage(s)} still missing after the push`);
}

export const sbomGenerator: Component = {
  name: 'sbom-generator',
  deps: ['base-image'],
  daemons: [],
  ensure: async ({ l, s }: Ctx) => {
    if (await present(s)) return 'reused';
    await buildAndPush(l, s);
    return 'started';
  },
};
