/**
 * The Dev Containers CLI's merge of image metadata (`mergeConfiguration` in @devcontainers/cli 0.89.0,
 * src/spec-node/imageMetadata.ts) as a pure table: one row per output field, each the CLI's own rule
 * with its JavaScript coercions, so `configuration` equals the CLI's `mergedConfiguration` for the
 * same label. Deliberate differences: docs/behaviour.md, Registry endpoints.
 */
import { type Entry, own } from './entries.js';

type Rule = (entries: readonly Entry[]) => unknown;

const values = (entries: readonly Entry[], field: string): unknown[] => entries.map((e) => own(e, field));

/** `true` if any entry's value is truthy (`init`, `privileged`). */
const anyTruthy =
  (field: string): Rule =>
  (entries) =>
    values(entries, field).some(Boolean);

/** Union of the values (arrays spread, other values kept), first-seen order; undefined when empty. */
const union =
  (field: string): Rule =>
  (entries) => {
    const all = [...new Set(([] as unknown[]).concat(...values(entries, field).filter(Boolean)))];
    return all.length ? all : undefined;
  };

/** Every truthy value in entry order; undefined when none (`entrypoints`). */
const collect =
  (field: string): Rule =>
  (entries) => {
    const all = values(entries, field).filter(Boolean);
    return all.length ? all : undefined;
  };

/** Every truthy value in entry order, as is (the five `...Commands` arrays). */
const commands =
  (field: string): Rule =>
  (entries) =>
    values(entries, field).filter(Boolean);

/** The last truthy value. */
const lastTruthy =
  (field: string): Rule =>
  (entries) =>
    values(entries, field).reverse().find(Boolean);

/** The last boolean value. */
const lastBoolean =
  (field: string): Rule =>
  (entries) =>
    values(entries, field)
      .reverse()
      .find((v) => typeof v === 'boolean');

/** Keys and values `Object.assign` would copy from a source (own enumerable; strings by index). */
const assignable = (source: unknown): [string, unknown][] =>
  source === undefined || source === null ? [] : Object.entries(Object(source) as object);

/**
 * `Object.assign({}, ...values)`: shallow merge, later wins, nulls kept. A `__proto__` key would
 * only swap the prototype of the CLI's result (never an own key), so it is left out.
 */
const shallowMerge =
  (field: string): Rule =>
  (entries) => {
    const merged: Record<string, unknown> = {};
    for (const source of values(entries, field)) {
      for (const [key, value] of assignable(source)) {
        if (key === '__proto__') continue;
        merged[key] = value;
      }
    }
    return merged;
  };

/** `customizations`: per tool key, the array of each entry's value in entry order. */
const customizations: Rule = (entries) => {
  const merged = new Map<string, unknown[]>();
  for (const value of values(entries, 'customizations')) {
    // The CLI iterates with for...in: object keys, or a string's indices.
    const keys =
      typeof value === 'string'
        ? Object.keys(value)
        : typeof value === 'object' && value !== null
          ? Object.keys(value)
          : [];
    for (const key of keys) {
      const item = (value as Record<string, unknown>)[key];
      const list = merged.get(key);
      if (list) list.push(item);
      else merged.set(key, [item]);
    }
  }
  if (!merged.size) return undefined;
  const result: Record<string, unknown> = {};
  for (const [key, list] of merged) Object.defineProperty(result, key, { value: list, enumerable: true });
  return result;
};

const MOUNT_KEY_ALIASES: Record<string, string> = { src: 'source', destination: 'target', dst: 'target' };

/** The target of a mount string as the CLI parses it (`a=b,c=d`, aliases, the last pair wins). */
export const mountStringTarget = (mount: string): string | undefined => {
  let target: string | undefined;
  for (const pair of mount.split(',')) {
    const [key = '', value] = pair.split('=');
    const name = Object.hasOwn(MOUNT_KEY_ALIASES, key) ? MOUNT_KEY_ALIASES[key] : key;
    if (name === 'target') target = value;
  }
  return target;
};

/** `mounts`: one per target, the last one wins, kept in the order of the winners. */
const mounts: Rule = (entries) => {
  const flat = values(entries, 'mounts').filter(Boolean).flat();
  const seen = new Set<unknown>();
  const kept: unknown[] = [];
  for (const mount of flat.reverse()) {
    const target = typeof mount === 'string' ? mountStringTarget(mount) : own(mount, 'target');
    if (seen.has(target)) continue;
    seen.add(target);
    kept.push(mount);
  }
  return kept.length ? kept.reverse() : undefined;
};

/** `forwardPorts`: union; numbers and `localhost:N` strings are the same port. */
const forwardPorts: Rule = (entries) => {
  const all = ([] as unknown[]).concat(...entries.map((e) => own(e, 'forwardPorts') || []));
  const unique = [...new Set(all.map((p) => (typeof p === 'number' ? `localhost:${p}` : p)))];
  const ports = unique.map((p) => (/localhost:\d+/.test(String(p)) ? parseInt(String(p).substring(10)) : p));
  return ports.length ? ports : undefined;
};

/** Bytes of a size such as `8gb` (lower-case units only, as the CLI); 0 when unparsable. */
export const sizeInBytes = (size: unknown): number => {
  const match = /^(\d+)([tgmk]b)?$/.exec(String(size));
  if (!match) return 0;
  const [, digits = '0', unit] = match;
  const factor = unit
    ? { t: 2 ** 40, g: 2 ** 30, m: 2 ** 20, k: 2 ** 10 }[unit[0] as 't' | 'g' | 'm' | 'k']
    : 1;
  return parseInt(digits, 10) * factor;
};

/** The object without its undefined fields (as JSON would print it). */
const definedOnly = (object: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));

const gpuObject = (gpu: unknown): Record<string, unknown> =>
  typeof gpu === 'object' && gpu !== null ? (gpu as Record<string, unknown>) : {};

/** The CLI's reduction of two `gpu` requirements. */
const maxGpu = (first: unknown, second: unknown): unknown => {
  if (first === undefined || first === false) return second;
  if (second === undefined || second === false) return first;
  if (first === 'optional' && second === 'optional') return 'optional';
  const x = gpuObject(first);
  const y = gpuObject(second);
  const cores = Math.max(Number(own(x, 'cores') || 0), Number(own(y, 'cores') || 0));
  const memory = Math.max(sizeInBytes(own(x, 'memory') || '0'), sizeInBytes(own(y, 'memory') || '0'));
  return definedOnly({ cores: cores || undefined, memory: memory ? `${memory}` : undefined });
};

/** `hostRequirements`: the maximum per field; sizes become byte counts (strings). */
const hostRequirements: Rule = (entries) => {
  const reqs = values(entries, 'hostRequirements');
  // Over no entries (a `[]` label) the CLI yields -Infinity maxima here; the service leaves them out.
  if (!reqs.length) return undefined;
  const cpus = Math.max(...reqs.map((r) => (own(r, 'cpus') || 0) as number));
  const memory = Math.max(...reqs.map((r) => sizeInBytes(own(r, 'memory') || '0')));
  const storage = Math.max(...reqs.map((r) => sizeInBytes(own(r, 'storage') || '0')));
  const gpu = reqs.map((r) => own(r, 'gpu')).reduce(maxGpu, undefined);
  return cpus || memory || storage || gpu
    ? definedOnly({
        cpus,
        memory: memory ? `${memory}` : undefined,
        storage: storage ? `${storage}` : undefined,
        gpu,
      })
    : undefined;
};

/** The merge table: output field -> the CLI's rule, in the CLI's field order. */
export const MERGE_TABLE: readonly (readonly [field: string, rule: Rule])[] = [
  ['init', anyTruthy('init')],
  ['privileged', anyTruthy('privileged')],
  ['capAdd', union('capAdd')],
  ['securityOpt', union('securityOpt')],
  ['entrypoints', collect('entrypoint')],
  ['mounts', mounts],
  ['customizations', customizations],
  ['onCreateCommands', commands('onCreateCommand')],
  ['updateContentCommands', commands('updateContentCommand')],
  ['postCreateCommands', commands('postCreateCommand')],
  ['postStartCommands', commands('postStartCommand')],
  ['postAttachCommands', commands('postAttachCommand')],
  ['waitFor', lastTruthy('waitFor')],
  ['remoteUser', lastTruthy('remoteUser')],
  ['containerUser', lastTruthy('containerUser')],
  ['userEnvProbe', lastTruthy('userEnvProbe')],
  ['remoteEnv', shallowMerge('remoteEnv')],
  ['containerEnv', shallowMerge('containerEnv')],
  ['overrideCommand', lastBoolean('overrideCommand')],
  ['portsAttributes', shallowMerge('portsAttributes')],
  ['otherPortsAttributes', lastTruthy('otherPortsAttributes')],
  ['forwardPorts', forwardPorts],
  ['shutdownAction', lastTruthy('shutdownAction')],
  ['updateRemoteUserUID', lastBoolean('updateRemoteUserUID')],
  ['hostRequirements', hostRequirements],
];

/** Merge label entries (in label order) as the CLI does; fields the CLI leaves undefined are absent. */
export const mergeConfiguration = (entries: readonly Entry[]): Record<string, unknown> => {
  const merged: Record<string, unknown> = {};
  for (const [field, rule] of MERGE_TABLE) {
    const value = rule(entries);
    if (value !== undefined) merged[field] = value;
  }
  return merged;
};
