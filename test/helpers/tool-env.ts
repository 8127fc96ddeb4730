/**
 * The environment a test gives a tool it runs with a closed environment (git, buildx, cosign, the
 * Dev Containers CLI): the search path, and HOME and TMPDIR inside a directory the test owns and
 * removes, so that nothing the tool writes for itself lands in the system temporary directory.
 */
export function toolEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: dir, TMPDIR: dir, ...extra };
}
