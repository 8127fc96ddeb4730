/** What may be shown of the Redis URL: its endpoint (what must be masked: secrets/masking.ts). Pure. */

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
