/**
 * Which access rule grants an action (docs/auth.md), pure: a rule applies to the tokens of its
 * issuer (or its static token) whose named claims are equal to its values (a list claim such as
 * `groups`: holding them); it grants its actions on the repositories and images its patterns
 * cover. `{claim}` in a pattern is the token's claim; a claim that is missing, not a string, or
 * outside `A-Z a-z 0-9 . _ - /` (or holding `..`) makes the rule not apply, never a wider match.
 * One rule must cover every resource touched.
 */
import type { AuthAction, AuthImagePattern, AuthRepositoryPattern, AuthRule } from '../config/types.js';
import { globToRegExp } from '../rules/globs.js';
import type { Identity } from './identity.js';

/** A repository as rules see it: host (lower case, no port) and path (no `.git`). */
export interface RepositoryResource {
  readonly host: string;
  readonly path: string;
}

/** An image target as rules see it: the registry as named, the repository name. */
interface ImageResource {
  readonly registry: string;
  readonly name: string;
}

/**
 * What a request touches. `anyRepository`: something of no known repository (a log whose build
 * is no longer kept), covered only by a rule for every repository (`host: '*'`, `path: '**'`).
 */
export interface Resources {
  readonly repository?: RepositoryResource | 'anyRepository';
  readonly image?: ImageResource;
}

const CLAIM_VALUE = /^[A-Za-z0-9._/-]+$/;

/** `pattern` with each `{claim}` replaced by its value; undefined when a claim cannot stand there. */
export function expand(pattern: string, claims: Readonly<Record<string, unknown>>): string | undefined {
  let unusable = false;
  const out = pattern.replace(/\{([^{}]*)\}/g, (_, name: string) => {
    const value = Object.hasOwn(claims, name) ? claims[name] : undefined;
    if (typeof value !== 'string' || !CLAIM_VALUE.test(value) || value.includes('..')) {
      unusable = true;
      return '';
    }
    return value;
  });
  return unusable ? undefined : out;
}

const globMatches = (pattern: string | undefined, value: string): boolean =>
  pattern !== undefined && globToRegExp(pattern).test(value);

function repositoryCovered(
  patterns: readonly AuthRepositoryPattern[],
  repository: Resources['repository'],
  claims: Readonly<Record<string, unknown>>,
): boolean {
  if (repository === undefined) return true;
  if (repository === 'anyRepository')
    return patterns.some((pattern) => pattern.host === '*' && pattern.path === '**');
  return patterns.some(
    (pattern) =>
      (pattern.host === '*' || pattern.host.toLowerCase() === repository.host.toLowerCase()) &&
      globMatches(expand(pattern.path, claims), repository.path),
  );
}

function imageCovered(
  patterns: readonly AuthImagePattern[],
  image: ImageResource | undefined,
  claims: Readonly<Record<string, unknown>>,
): boolean {
  if (image === undefined) return true;
  return patterns.some(
    (pattern) =>
      (pattern.registry === '*' || pattern.registry === image.registry) &&
      globMatches(expand(pattern.name, claims), image.name),
  );
}

/** A claim holds a rule's value when equal to it, or when it is a list that holds it (`groups`). */
const claimHolds = (claim: unknown, value: string): boolean =>
  claim === value || (Array.isArray(claim) && claim.includes(value));

/** Whether the rule is about this caller: its issuer or token, and its claims. */
function appliesTo(rule: AuthRule, identity: Identity): boolean {
  if (rule.issuer !== undefined ? rule.issuer !== identity.issuerName : rule.token !== identity.tokenName)
    return false;
  if (rule.issuer === undefined && identity.tokenName === undefined) return false;
  return Object.entries(rule.claims ?? {}).every(([name, value]) => claimHolds(identity.claims[name], value));
}

/** The tenant a rule names for the builds it admits (docs/queue.md); undefined when it names none or cannot. */
export const ruleTenant = (rule: AuthRule | undefined, identity: Identity): string | undefined =>
  rule?.tenant === undefined ? undefined : expand(rule.tenant, identity.claims);

/** The first rule granting `action` on every resource of `resources`, or undefined. */
export function grantingRule(
  rules: readonly AuthRule[],
  identity: Identity,
  action: AuthAction,
  resources: Resources,
): AuthRule | undefined {
  return rules.find(
    (rule) =>
      rule.actions.includes(action) &&
      appliesTo(rule, identity) &&
      repositoryCovered(rule.repositories, resources.repository, identity.claims) &&
      imageCovered(rule.images, resources.image, identity.claims),
  );
}
