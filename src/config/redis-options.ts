/**
 * The rules of the Redis options taken together (docs/redis.md): one server (`redis.url`) or a
 * cluster (`redis.clusterNodes`, its password from a file, TLS by a switch), never both; the
 * password file read once at startup. Problems name the options, never the password.
 */
import { readText } from './files.js';
import type { OptionValues } from './option-values.js';

type RedisOptions = Pick<OptionValues, 'redisUrl' | 'redisClusterNodes' | 'redisPasswordFile' | 'redisTls'>;

const URL_OPTION = '--redis-url (REDIS_URL, redis.url)';
const NODES_OPTION = '--redis-cluster-nodes (REDIS_CLUSTER_NODES, redis.clusterNodes)';
const PASSWORD_OPTION = '--redis-password-file (REDIS_PASSWORD_FILE, redis.passwordFile)';
const TLS_OPTION = '--redis-tls (REDIS_TLS, redis.tls)';

/** Every problem of the Redis options together (empty when they are consistent). */
export function redisOptionProblems(options: RedisOptions): string[] {
  // A list that failed its own check is unset here (its problem is already listed).
  const nodes = options.redisClusterNodes as readonly string[] | undefined;
  const cluster = nodes !== undefined && nodes.length > 0;
  const problems: string[] = [];
  if (cluster && options.redisUrl !== undefined)
    problems.push(`${URL_OPTION} and ${NODES_OPTION} are both set: give one server or one cluster, not both`);
  if (!cluster && options.redisPasswordFile !== undefined)
    problems.push(
      `${PASSWORD_OPTION} is only for ${NODES_OPTION}: a single server takes its password in the URL`,
    );
  if (!cluster && options.redisTls)
    problems.push(`${TLS_OPTION} is only for ${NODES_OPTION}: a single server says TLS with rediss://`);
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
