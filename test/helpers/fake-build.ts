/** The repository, a plan and the BuildResult that unit tests' fake job runners take and answer. */
import type { BuildPlan, BuildResult } from '../../workers/plan/plan-types.js';

export const REPO = 'https://git.example.com/org/app.git';

export const RESULT: BuildResult = {
  image: 'registry.example.com/app:sha-0123456',
  registry: 'registry.example.com',
  name: 'app',
  tag: 'sha-0123456',
  branch: 'main',
  commit: '0123456789abcdef0123456789abcdef01234567',
  gitCloneLogId: 'git-00000000-0000-4000-8000-000000000000',
  imageBuildLogId: 'img-00000000-0000-4000-8000-000000000001',
  digest: `sha256:${'d'.repeat(64)}`,
};

/** A planned request without secrets, as the plan makes it (for the worker's own unit tests). */
export const PLAN: BuildPlan = {
  repository: 'https://git.example/o/app.git',
  url: {
    scheme: 'https',
    scpStyle: false,
    host: 'git.example',
    path: 'o/app.git',
    cloneUrl: 'https://git.example/o/app.git',
  },
  image: { registry: 'r.example', name: 'app' },
  platforms: [],
  noCache: false,
  mode: 'auto',
  buildSecrets: [],
  secrets: [],
} as unknown as BuildPlan;
