// The base image `<registry>/dev/base:1` on every registry: busybox-static rootfs for linux/amd64
// and linux/386 (applet symlinks, /etc/passwd, /etc/group), built FROM scratch through the stack's
// own builder and pushed as one multi-platform index to all four registries in a single build.
import { encodeBasicAuth } from '../../../src/secrets/basic-auth.js';
import fs from 'node:fs';
import path from 'node:path';
import { I386_DEB_DIR, type Layout } from '../layout.js';
import { baseEnv, run } from '../proc.js';
import type { State } from '../state.js';
import { MANIFEST_ACCEPT, type RegistryCreds, registryFetch } from '../registry-client.js';
import { STACK_BUILDER_NAME } from './builder.js';
import { type RegistryKind, registryHost } from './registries.js';
import type { Component, Ctx } from './types.js';

export const BASE_REPOSITORY = 'dev/base';
export const BASE_TAG = '1';
const KINDS: readonly RegistryKind[] = ['anon', 'nodelete', 'basic', 'token'];

export function baseImage(s: State, kind: RegistryKind): string {
  return `${registryHost(s, kind)}/${BASE_REPOSITORY}:${BASE_TAG}`;
}

export function registryCreds(s: State, kind: RegistryKind): RegistryCreds | undefined {
  const c = s.credentials;
  if (kind === 'basic') return { user: c.registryBasicUser, password: c.registryBasicPassword };
  if (kind === 'token') return { user: c.registryTokenUser, password: c.registryTokenPassword };
  return undefined;
}

const PASSWD = 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n';
const GROUP = 'root:x:0:\nnogroup:x:65534:\n';

async function rootfsTar(
  l: Layout,
  arch: 'amd64' | '386',
  busybox: string,
  applets: string[],
): Promise<void> {
  const tar = path.join(l.base, `rootfs-${arch}.tar`);
  if (fs.existsSync(tar)) return;
  const dir = path.join(l.base, `rootfs-${arch}`);
  fs.rmSync(dir, { recursive: true, force: true });
  for (const d of ['bin', 'sbin', 'usr/bin', 'usr/sbin', 'etc', 'root', 'tmp', 'home', 'var/tmp'])
    fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.chmodSync(path.join(dir, 'tmp'), 0o1777);
  fs.chmodSync(path.join(dir, 'var/tmp'), 0o1777);
  fs.chmodSync(path.join(dir, 'root'), 0o700);
  fs.copyFileSync(busybox, path.join(dir, 'bin/busybox'));
  fs.chmodSync(path.join(dir, 'bin/busybox'), 0o755);
  for (const a of applets) {
    if (a === 'bin/busybox' || a.includes('..')) continue;
    const link = path.join(dir, a);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    if (!fs.existsSync(link)) fs.symlinkSync('/bin/busybox', link);
  }
  fs.writeFileSync(path.join(dir, 'etc/passwd'), PASSWD);
  fs.writeFileSync(path.join(dir, 'etc/group'), GROUP);
  await run('tar', ['-C', dir, '--owner=0', '--group=0', '--numeric-owner', '-cf', `${tar}.tmp`, '.']);
  fs.renameSync(`${tar}.tmp`, tar);
}

async function buildContext(l: Layout): Promise<void> {
  fs.mkdirSync(l.base, { recursive: true });
  const { stdout } = await run('/bin/busybox', ['--list-full']);
  const applets = stdout.split('\n').filter((a) => a.trim() !== '');
  await rootfsTar(l, 'amd64', '/bin/busybox', applets);
  const i386Tar = path.join(l.base, 'rootfs-386.tar');
  if (!fs.existsSync(i386Tar)) {
    const deb = fs.readdirSync(I386_DEB_DIR).find((f) => /^busybox-static_.*_i386\.deb$/.test(f));
    if (!deb) throw new Error(`no i386 busybox-static .deb in ${I386_DEB_DIR}: run bash .ci/install.sh`);
    const x = path.join(l.base, 'i386-deb');
    fs.rmSync(x, { recursive: true, force: true });
    await run('dpkg', ['-x', path.join(I386_DEB_DIR, deb), x]);
    await rootfsTar(l, '386', path.join(x, 'bin/busybox'), applets);
  }
  fs.writeFileSync(
    path.join(l.base, 'Dockerfile'),
    'FROM scratch\nARG TARGETARCH\nADD rootfs-${TARGETARCH}.tar /\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nCMD ["/bin/sh"]\n',
  );
}

/** Writes the registry credentials into the stack's DOCKER_CONFIG (keeps what buildx put there). */
export function writeDockerAuths(l: Layout, s: State): void {
  fs.mkdirSync(l.dockerConfig, { recursive: true });
  const file = path.join(l.dockerConfig, 'config.json');
  let config: Record<string, unknown> = {};
  try {
    config = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    /* new */
  }
  const auths: Record<string, { auth: string }> = {};
  for (const kind of KINDS) {
    const c = registryCreds(s, kind);
    if (c) auths[registryHost(s, kind)] = { auth: encodeBasicAuth(c.user, c.password) };
  }
  config.auths = auths;
  fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
}

async function present(s: State, kind: RegistryKind): Promise<boolean> {
  const res = await registryFetch(registryHost(s, kind), `/v2/${BASE_REPOSITORY}/manifests/${BASE_TAG}`, {
    method: 'HEAD',
    headers: { accept: MANIFEST_ACCEPT },
    creds: registryCreds(s, kind),
  });
  return res.status === 200;
}

export const baseImages: Component = {
  name: 'base-image',
  deps: ['builder', 'registry-anon', 'registry-nodelete', 'registry-basic', 'registry-token'],
  daemons: [],
  ensure: async ({ l, s }: Ctx) => {
    writeDockerAuths(l, s);
    const missing: RegistryKind[] = [];
    for (const kind of KINDS) if (!(await present(s, kind))) missing.push(kind);
    if (missing.length === 0) return 'reused';
    await buildContext(l);
    const tags = missing.flatMap((kind) => ['-t', baseImage(s, kind)]);
    await run(
      'docker',
      [
        'buildx',
        'build',
        '--builder',
        STACK_BUILDER_NAME,
        '--progress',
        'plain',
        '--platform',
        'linux/amd64,linux/386',
        '--push',
        ...tags,
        l.base,
      ],
      { env: baseEnv({ DOCKER_CONFIG: l.dockerConfig }), timeoutMs: 180_000 },
    );
    for (const kind of missing)
      if (!(await present(s, kind))) throw new Error(`${baseImage(s, kind)} still missing after the push`);
    return 'started';
  },
};
