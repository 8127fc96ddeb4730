/** What may be shown of the Redis URL (its endpoint), and what must be masked (its password). Pure. */

export interface RedisEndpoint {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  readonly db: number;
}

const DEFAULT_PORT = 6379;

/** Host, port, TLS and database of a validated `redis://` / `rediss://` URL: never its credentials. */
export function redisEndpoint(redisUrl: string): RedisEndpoint {
  const url = new URL(redisUrl);
  const db = url.pathname.replace(/^\//, '');
  return {
    host: url.hostname,
    port: url.port === '' ? DEFAULT_PORT : Number(url.port),
    tls: url.protocol === 'rediss:',
    db: db === '' ? 0 : Number(db),
  };
}

/** The secrets a Redis URL holds (its password, decoded and as written; the whole URL), for masking. */
export function redisSecrets(redisUrl: string | undefined): string[] {
  if (redisUrl === undefined) return [];
  const url = new URL(redisUrl);
  const secrets = [redisUrl];
  if (url.password !== '') {
    secrets.push(url.password);
    try {
      secrets.push(decodeURIComponent(url.password));
    } catch {
      // an undecodable password is masked as written
    }
  }
  return secrets;
}
