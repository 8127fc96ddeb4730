// The service's container as the chart renders it, and what that container sees at run time: its
// environment (secretKeyRefs resolved) and its mounted files, laid out under a scratch root.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { K8sObject, Rendered } from './helm.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef: { name: string; key: string } };
}
interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}
interface Volume {
  name: string;
  emptyDir?: { sizeLimit?: string };
  secret?: { secretName: string; defaultMode?: number; items?: { key: string; path: string }[] };
  configMap?: { name: string };
}
interface Probe {
  httpGet: { path: string; port: string };
}
export interface Container {
  name: string;
  image: string;
  env: EnvVar[];
  ports: { name: string; containerPort: number }[];
  volumeMounts: VolumeMount[];
  securityContext: Record<string, unknown>;
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
  resources: unknown;
}
interface PodSpec {
  automountServiceAccountToken: boolean;
  terminationGracePeriodSeconds: number;
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: Volume[];
}
export interface DeploymentSpec {
  replicas: number;
  selector: { matchLabels: Record<string, string> };
  template: {
    metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    spec: PodSpec;
  };
}

export const deploymentSpec = (rendered: Rendered): DeploymentSpec =>
  rendered.one('Deployment').spec as DeploymentSpec;

export function container(rendered: Rendered): Container {
  const containers = deploymentSpec(rendered).template.spec.containers;
  if (containers.length !== 1) throw new Error(`${containers.length} containers`);
  return containers[0] as Container;
}

/** Secrets (and ConfigMaps) the user keeps outside the chart: name -> key -> content. */
export type ExternalSecrets = Map<string, Map<string, string>>;

/** The files of a ConfigMap or Secret (the chart's, Secret data base64-decoded, or the user's), by name. */
function objectFiles(
  rendered: Rendered,
  kind: 'ConfigMap' | 'Secret',
  name: string,
  external: ExternalSecrets,
): Map<string, string> {
  const object = rendered.objects.find((o: K8sObject) => o.kind === kind && o.metadata.name === name);
  if (object === undefined && external.has(name)) return external.get(name) as Map<string, string>;
  if (object === undefined)
    throw new Error(`the pod uses ${kind} ${name}, which is neither rendered nor the user's`);
  const data = (object.data ?? {}) as Record<string, string>;
  return new Map(
    Object.entries(data).map(([k, v]) => [
      k,
      kind === 'Secret' ? Buffer.from(v, 'base64').toString('utf8') : v,
    ]),
  );
}

/** The files a volume holds. */
function volumeFiles(rendered: Rendered, volume: Volume, external: ExternalSecrets): Map<string, string> {
  if (volume.emptyDir !== undefined) return new Map();
  if (volume.secret !== undefined) {
    const files = objectFiles(rendered, 'Secret', volume.secret.secretName, external);
    const { items } = volume.secret;
    if (items === undefined) return files;
    // Only the listed keys, each under its path (a missing key keeps the pod from starting).
    return new Map(
      items.map(({ key, path }) => {
        const content = files.get(key);
        if (content === undefined) throw new Error(`Secret ${volume.secret?.secretName} has no key ${key}`);
        return [path, content];
      }),
    );
  }
  if (volume.configMap !== undefined)
    return objectFiles(rendered, 'ConfigMap', volume.configMap.name, external);
  throw new Error(`volume ${volume.name} of an unknown type`);
}

export interface PodView {
  /** Where the container's filesystem root is laid out. */
  root: string;
  /** The container's environment, paths under a mount moved below `root`. */
  env: Record<string, string>;
}

/**
 * Lays out the container's mounts under a scratch root and resolves its environment, so that the
 * real configuration loader can read what the pod would. A mount or secretKeyRef of a Secret the
 * chart does not render reads `external` (the user's Secrets), or fails.
 */
export function podView(rendered: Rendered, external: ExternalSecrets): PodView {
  const c = container(rendered);
  const volumes = new Map(deploymentSpec(rendered).template.spec.volumes.map((v) => [v.name, v]));
  const root = mkdtempSync(join(tmpdir(), 'ibs-chart-pod-'));
  for (const mount of c.volumeMounts) {
    const volume = volumes.get(mount.name);
    if (volume === undefined) throw new Error(`mount ${mount.name} has no volume`);
    const files = volumeFiles(rendered, volume, external);
    const target = join(root, mount.mountPath);
    if (mount.subPath !== undefined) {
      const content = files.get(mount.subPath);
      if (content === undefined) throw new Error(`${mount.name} has no key ${mount.subPath}`);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
      continue;
    }
    mkdirSync(target, { recursive: true });
    for (const [key, content] of files) writeFileSync(join(target, key), content);
  }
  const mountPaths = c.volumeMounts.map((m) => m.mountPath);
  const env: Record<string, string> = {};
  for (const v of c.env) {
    if (v.valueFrom !== undefined) {
      const { name, key } = v.valueFrom.secretKeyRef;
      const value = objectFiles(rendered, 'Secret', name, external).get(key);
      if (value === undefined) throw new Error(`Secret ${name} has no key ${key}`);
      env[v.name] = value;
      continue;
    }
    const value = v.value ?? '';
    const underMount = mountPaths.some((p) => value === p || value.startsWith(`${p}/`));
    env[v.name] = underMount ? join(root, value) : value;
  }
  return { root, env };
}
