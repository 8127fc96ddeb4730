/** The repository and the BuildResult that unit tests' fake job runners answer with. */
import type { BuildResult } from '../../workers/plan/plan-types.js';

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
