/**
 * The JSON type each merged field has in the dev container metadata schema. A value of another
 * type is still merged exactly as the Dev Containers CLI merges it (e.g. a string `remoteEnv`
 * merges by character index), which is rarely what the label meant: each such value gets a
 * warning. `null` means unset and is never warned about. Pure.
 */
import { type Entry, originOf } from './entries.js';
import { type DevcontainerWarning, warning } from './warnings.js';

type JsonType = 'boolean' | 'string' | 'array' | 'object';

const FIELD_TYPES: Readonly<Record<string, JsonType>> = {
  init: 'boolean',
  privileged: 'boolean',
  overrideCommand: 'boolean',
  updateRemoteUserUID: 'boolean',
  capAdd: 'array',
  securityOpt: 'array',
  mounts: 'array',
  forwardPorts: 'array',
  entrypoint: 'string',
  remoteUser: 'string',
  containerUser: 'string',
  waitFor: 'string',
  userEnvProbe: 'string',
  shutdownAction: 'string',
  remoteEnv: 'object',
  containerEnv: 'object',
  portsAttributes: 'object',
  otherPortsAttributes: 'object',
  customizations: 'object',
  hostRequirements: 'object',
};

const article = (type: string): string => (/^[ao]/.test(type) ? `an ${type}` : `a ${type}`);

const jsonType = (value: unknown): string =>
  Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;

export const fieldTypeWarnings = (entries: readonly Entry[]): DevcontainerWarning[] =>
  entries.flatMap((entry) =>
    Object.entries(entry).flatMap(([field, value]) => {
      const expected = Object.hasOwn(FIELD_TYPES, field) ? FIELD_TYPES[field] : undefined;
      const actual = jsonType(value);
      if (!expected || actual === 'null' || actual === expected) return [];
      return [
        warning(
          'unexpected_type',
          `${field} of ${originOf(entry)} is ${article(actual)}, expected ${article(expected)}; merged as the Dev Containers CLI merges it`,
        ),
      ];
    }),
  );
