// Where the stack keeps its state: one directory (IBS_STACK_DIR, default /tmp/ibs-stack).
import path from 'node:path';

export const DEFAULT_STACK_DIR = '/tmp/ibs-stack';

export function stackDir(): string {
  return path.resolve(process.env.IBS_STACK_DIR || DEFAULT_STACK_DIR);
}

/** Directory of the stack's own scripts (test/stack). */
export const STACK_SRC = path.dirname(new URL(import.meta.url).pathname);

/** Binaries installed by .ci/install.sh (trixie's dockerd and friends). */
export const DOCKER_BIN_DIR = '/opt/ibs-docker/bin';
export const I386_DEB_DIR = '/opt/ibs-docker/i386';
/** trixie's cosign, extracted by .ci/install.sh (COSIGN_BIN in the env). */
export const COSIGN_BIN = path.join(DOCKER_BIN_DIR, 'cosign');

export interface Layout {
  root: string;
  run: string;
  logs: string;
  stateFile: string;
  envFile: string;
  envJsonFile: string;
  docker: string;
  dockerSocket: string;
  /** Builder b's engine: its own data root, exec root and socket (builder a's is `docker`). */
  dockerB: string;
  dockerSocketB: string;
  /** Certificates of the builders' TLS fronts (the server's, the service's client pair, another CA's). */
  builderTls: string;
  dockerConfig: string;
  registries: string;
  token: string;
  git: string;
  repos: string;
  tls: string;
  ssh: string;
  base: string;
}

export function layout(root = stackDir()): Layout {
  const docker = path.join(root, 'docker');
  const git = path.join(root, 'git');
  return {
    root,
    run: path.join(root, 'run'),
    logs: path.join(root, 'logs'),
    stateFile: path.join(root, 'state.json'),
    envFile: path.join(root, 'env'),
    envJsonFile: path.join(root, 'env.json'),
    docker,
    dockerSocket: path.join(docker, 'docker.sock'),
    dockerB: path.join(root, 'docker-b'),
    dockerSocketB: path.join(root, 'docker-b', 'docker.sock'),
    builderTls: path.join(root, 'builder-tls'),
    dockerConfig: path.join(root, 'docker-config'),
    registries: path.join(root, 'registries'),
    token: path.join(root, 'token'),
    git,
    repos: path.join(git, 'repos'),
    tls: path.join(git, 'tls'),
    ssh: path.join(root, 'ssh'),
    base: path.join(root, 'base'),
  };
}
