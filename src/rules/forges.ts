/**
 * The forges whose push webhooks start prebuilds (docs/prebuilds.md), one row each: how a delivery
 * proves it knows the secret, the headers naming its event and its id, the event names of a push
 * and a ping, where a push gives its repository's URLs, and the option holding the secret's file.
 * The hook routes, the configuration, its view and its types all read this table. Pure, no imports.
 */

export interface ForgeFacts {
  /** The product's name (option labels). */
  readonly product: string;
  /** The products that send its webhooks (option descriptions). */
  readonly senders: string;
  /**
   * How a delivery proves it knows the secret: `hmac-sha256`, the header holds `sha256=<hex>` of the
   * raw body keyed by the secret; `token`, the header holds the secret itself.
   */
  readonly signature: { readonly scheme: 'hmac-sha256' | 'token'; readonly header: string };
  /** The headers naming the event, the first present wins. */
  readonly eventHeaders: readonly string[];
  /** The headers naming the delivery, the first present wins. */
  readonly deliveryHeaders: readonly string[];
  /** The event names of a push and of a ping. */
  readonly events: { readonly push: string; readonly ping: string };
  /** The payload object describing the repository and its URL fields, in order. */
  readonly repository: { readonly object: string; readonly fields: readonly string[] };
  /** What the secret is called in its option (`--<forge>-hook-<secret>-file`). */
  readonly secret: 'secret' | 'token';
  /** The option naming the secret's file. */
  readonly secretOption: string;
}

export const FORGES = {
  github: {
    product: 'GitHub',
    senders: 'GitHub',
    signature: { scheme: 'hmac-sha256', header: 'x-hub-signature-256' },
    eventHeaders: ['x-github-event'],
    deliveryHeaders: ['x-github-delivery'],
    events: { push: 'push', ping: 'ping' },
    repository: { object: 'repository', fields: ['clone_url', 'ssh_url', 'html_url', 'git_url'] },
    secret: 'secret',
    secretOption: 'githubHookSecretFile',
  },
  gitlab: {
    product: 'GitLab',
    senders: 'GitLab',
    signature: { scheme: 'token', header: 'x-gitlab-token' },
    eventHeaders: ['x-gitlab-event', 'x-github-event'],
    deliveryHeaders: ['x-gitlab-event-uuid'],
    events: { push: 'Push Hook', ping: 'ping' },
    repository: { object: 'project', fields: ['git_http_url', 'git_ssh_url', 'web_url'] },
    secret: 'token',
    secretOption: 'gitlabHookTokenFile',
  },
  gitea: {
    product: 'Gitea',
    senders: 'Gitea or Forgejo',
    signature: { scheme: 'hmac-sha256', header: 'x-hub-signature-256' },
    eventHeaders: ['x-gitea-event', 'x-github-event'],
    deliveryHeaders: ['x-github-delivery', 'x-gitea-delivery'],
    events: { push: 'push', ping: 'ping' },
    repository: { object: 'repository', fields: ['clone_url', 'ssh_url', 'html_url'] },
    secret: 'secret',
    secretOption: 'giteaHookSecretFile',
  },
} as const satisfies Readonly<Record<string, ForgeFacts>>;

export type Forge = keyof typeof FORGES;

/** The forges, in the table's order (routes, options, the configuration view). */
export const FORGE_NAMES = Object.keys(FORGES) as Forge[];

export const isForge = (name: string): name is Forge => Object.hasOwn(FORGES, name);

/** The label of the option naming a forge's secret file (`GitHub webhook secret file`). */
export const secretFileLabel = (forge: Forge): string =>
  `${FORGES[forge].product} webhook ${FORGES[forge].secret} file`;

/** A header as forges document it (`x-hub-signature-256` -> `X-Hub-Signature-256`). */
export const headerTitle = (header: string): string =>
  header.replace(/(^|-)([a-z])/g, (_all, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`);
