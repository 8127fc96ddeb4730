/**
 * The one maker of a registry call: a target (registry as named, name, tag), the repository actions
 * and the credentials. Credentials are the caller's own when they name the registry, else the
 * ambient docker config's entry for the registry's host (`ghcr.io/org` is looked up as `ghcr.io`),
 * else none. No request is made here: the access bundle carries the client for its holders.
 */
import type { DockerConfigDocument } from '../config/types.js';
import type { RegistryCall, RegistryClient } from './client.js';
import { findRegistryAuth, type RegistryCredentials } from './docker-auth.js';
import { canonicalRegistryHost, type ImageReference, parseReference } from './reference.js';

/** Credentials the caller gave: for `registry` only when it is named, else for any registry. */
export interface OwnCredentials extends RegistryCredentials {
  readonly registry?: string;
}

/** What every registry user of the service holds: the client, the insecure registries, the credentials. */
export interface RegistryAccess {
  readonly client: RegistryClient;
  readonly insecureRegistries: readonly string[];
  /** The ambient docker config (`registryAuth`). */
  readonly registryAuth: DockerConfigDocument | undefined;
  /** A request's own credentials (a build's `registryCredentials`, the X-Registry headers). */
  readonly own?: OwnCredentials;
}

/** A target whose tag is known: the registry as the caller named it, the name, the tag. */
export interface CallTarget {
  readonly registry: string;
  readonly name: string;
  readonly tag: string;
}

const names = (ref: ImageReference, registry: string): boolean => {
  const host = canonicalRegistryHost(registry);
  return host === canonicalRegistryHost(ref.registry) || host === canonicalRegistryHost(ref.host);
};

/** The credentials of a call to `ref`: the caller's own when they name it, else ambient, else none. */
function callCredentials(
  ref: ImageReference,
  access: Pick<RegistryAccess, 'registryAuth' | 'own'>,
): RegistryCredentials | undefined {
  const { own, registryAuth } = access;
  if (own !== undefined && (own.registry === undefined || names(ref, own.registry))) {
    return { username: own.username, password: own.password };
  }
  return findRegistryAuth(registryAuth, ref.registry) ?? findRegistryAuth(registryAuth, ref.host);
}

/** The call that does `actions` on `target` (throws the reference grammar's 400 for a bad target). */
export function registryCall(
  access: Omit<RegistryAccess, 'client'>,
  target: CallTarget,
  actions: readonly string[],
): RegistryCall {
  const ref = parseReference(target, access.insecureRegistries);
  return { ref, credentials: callCredentials(ref, access), actions };
}
