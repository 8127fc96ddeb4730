// Every component of the stack, in a valid start order (dependencies listed first).
import { baseImages } from './base-image.js';
import { builder } from './builder.js';
import { dockerd } from './dockerd.js';
import { fixtures } from './fixtures.js';
import { gitServers } from './git-servers.js';
import { keys } from './keys.js';
import { redis } from './redis.js';
import { registries, tokenIssuer } from './registries.js';
import type { Component } from './types.js';

export const COMPONENTS: readonly Component[] = [
  keys,
  dockerd,
  tokenIssuer,
  ...registries,
  fixtures,
  builder,
  baseImages,
  ...gitServers,
  redis,
];
