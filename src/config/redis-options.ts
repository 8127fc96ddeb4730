/**
 * The rules of the Redis options taken together (docs/redis.md): one server (`redis.url`), a
 * cluster (`redis.clusterNodes`) or Sentinels (`redis.sentinels` and `redis.sentinelName`), never
 * two of them; the password of a cluster or of Sentinels from a file, read once at startup, TLS by
 * a switch. Problems name the options, never the password.
 */
import { readText } from './files.js';
import type { OptionValues } from './option-values.js';

type RedisOptions = Pick<
  OptionValues,
  'redisUrl' | 'redisClusterNodes' | 'redisSentinels' | 'redisSentinelName' | 'redisPasswordFile' | 'redisTls'
>;

const URL_OPTION = '--redis-url (REDIS_URL, redis.url)';
const NODES_OPTION = '--redis-cluster-nodes (REDIS_CLUSTER_NODES, redis.clusterNodes)';
const PASSWORD_OPTION = '--redis-password-file (REDIS_PASSWORD_FILE, redis.passwordFile)';
const TLS_OPTION = '--redis-tls (REDIS_TLS, redis.tls)';
const SENTINELS_OPTION = '--redis-sentinels (REDIS_SENTINELS, redis.sentinels)';
const NAME_OPTION = '--redis-sentinel-name (REDIS_SENTINEL_NAME, redis.sentinelName)';

/** A list that failed its own check is unset here (its problem is already listed). */
const given = (list: readonly string[] | undefined): boolean => list !== undefined && list.length > 0;

/** Every problem of the Redis options together (empty when they are consistent). */
export function redisOptionProblems(options: RedisOptions): string[] {
  const cluster = given(options.redisClusterNodes as readonly string[] | undefined);
  const sentinels = given(options.redisSentinels as readonly string[] | undefined);
  const problems: string[] = [];
  const chosen = [
    options.redisUrl === undefined ? undefined : URL_OPTION,
    cluster ? NODES_OPTION : undefined,
    sentinels ? SENTINELS_OPTION : undefined,
  ].filter((option) => option !== undefined);
  if (chosen.length > 1)
    problems.push(
      `${chosen.join(' and ')} cannot be set together: give one server, one cluster or one set of Sentinels`,
    );
  if (sentinels && options.redisSentinelName === undefined)
    problems.push(
      `${SENTINELS_OPTION} needs ${NAME_OPTION}: the name the Sentinels monitor the primary under`,
    );
  if (!sentinels && options.redisSentinelName !== undefined)
    problems.push(`${NAME_OPTION} is only for ${SENTINELS_OPTION}`);
  const withNodes = `${NODES_OPTION} or ${SENTINELS_OPTION}`;
  if (!cluster && !sentinels && options.redisPasswordFile !== undefined)
    problems.push(
      `${PASSWORD_OPTION} is only for ${withNodes}: a single server takes its password in the URL`,
    );
  if (!cluster && !sentinels && options.redisTls)
    problems.push(`${TLS_OPTION} is only for ${withNodes}: a single server says TLS with rediss://`);
  return problems;
}

/** The cluster's password from its file (one non-empty line), or undefined (none, or a problem). */
export function redisPassword(path: string | undefined, problems: string[]): string | undefined {
  if (path === undefined) return undefined;
  const read = readText(path);
  if (!read.ok) {
    problems.push(`${PASSWORD_OPTION}: ${path} ${read.why}`);
    return undefined;
  }
  const password = read.text.replace(/\r?\n$/, '');
  if (password.length === 0 || /[\r\n]/.test(password)) {
    problems.push(`${PASSWORD_OPTION}: ${path} must hold one non-empty line`);
    return undefined;
  }
  return password;
}
