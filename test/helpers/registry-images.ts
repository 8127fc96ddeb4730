// Fixture images for the registry integration tests, built and pushed by the real builder:
// `docker buildx build --push` through a buildx remote builder on the stack's STACK_BUILDER_ENDPOINT,
// with a temporary DOCKER_CONFIG holding the stack registries' credentials.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { encodeBasicAuth } from '../../src/secrets/basic-auth.js';
import type { StackEnv } from '../stack/env.js';

interface ImageSpec {
  dockerfile: string;
  platforms: string[];
  /** Full references `<registry>/<name>:<tag>` to push. */
  tags: string[];
}

export interface FixtureBuilder {
  build: (spec: ImageSpec) => Promise<void>;
  dispose: () => Promise<void>;
}

/** A unique tag suffix for this test run, so runs never see each other's images. */
export const runId = (): string => `it-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;

export async function fixtureBuilder(env: StackEnv): Promise<FixtureBuilder> {
  const dockerConfig = await mkdtemp(join(tmpdir(), 'ibs-regtest-docker-'));
  const auths = {
    [env.REGISTRY_BASIC]: { auth: encodeBasicAuth(env.REGISTRY_BASIC_USER, env.REGISTRY_BASIC_PASSWORD) },
    [env.REGISTRY_TOKEN]: { auth: encodeBasicAuth(env.REGISTRY_TOKEN_USER, env.REGISTRY_TOKEN_PASSWORD) },
  };
  await writeFile(join(dockerConfig, 'config.json'), JSON.stringify({ auths }), { mode: 0o600 });
  const builder = `ibs-regtest-${randomBytes(4).toString('hex')}`;
  const dockerEnv = { DOCKER_CONFIG: dockerConfig };
  await execa(
    'docker',
    ['buildx', 'create', '--name', builder, '--driver', 'remote', env.STACK_BUILDER_ENDPOINT],
    {
      env: dockerEnv,
    },
  );
  return {
    build: async (spec) => {
      const context = await mkdtemp(join(tmpdir(), 'ibs-regtest-ctx-'));
      try {
        await writeFile(join(context, 'Dockerfile'), spec.dockerfile);
        await execa(
          'docker',
          [
            'buildx',
            'build',
            '--builder',
            builder,
            '--progress',
            'plain',
            '--provenance',
            'mode=min',
            '--platform',
            spec.platforms.join(','),
            ...spec.tags.flatMap((t) => ['-t', t]),
            '--push',
            context,
          ],
          { env: dockerEnv, timeout: 180_000 },
        );
      } finally {
        await rm(context, { recursive: true, force: true });
      }
    },
    dispose: async () => {
      await execa('docker', ['buildx', 'rm', builder], { env: dockerEnv, reject: false });
      await rm(dockerConfig, { recursive: true, force: true });
    },
  };
}
