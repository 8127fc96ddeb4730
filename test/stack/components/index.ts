// Every component of the stack, in a valid start order (dependencies listed first).
import { baseImages } from './base-image.js';
import { builders } from './builder.js';
import { dockerds } from './dockerd.js';
import { fixtures } from './fixtures.js';
import { gitServers } from './git-servers.js';
import { keys } from './keys.js';
import { redis } from './redis.js';
import { redisCluster } from './redis-cluster.js';
import { sbomGenerator } from './sbom-generator.js';
import { registries, tokenIssuer } from './registries.js';
import type { Component } from './types.js';

export const COMPONENTS: readonly Component[] = [
  keys,
  ...dockerds,
  tokenIssuer,
  ...registries,
  fixtures,
  ...builders,
  baseImages,
  sbomGenerator,
  ...gitServers,
  redis,
  redisCluster,
];
