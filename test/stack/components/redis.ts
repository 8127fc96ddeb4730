// A real redis-server on a free loopback port, with a generated password and no persistence: the
// shared store of the service's Redis mode (STACK_REDIS_URL in the stack's env).
import path from 'node:path';
import { baseEnv } from '../proc.js';
import { redisAnswers, writeRedisConfig } from '../redis-server.js';
import { claimPort } from '../state.js';
import { ensureDaemon } from './daemon.js';
import type { Component, Ctx } from './types.js';

export const redis: Component = {
  name: 'redis',
  deps: [],
  daemons: ['redis'],
  ensure: ({ l, s }: Ctx) =>
    ensureDaemon(l, {
      name: 'redis',
      healthy: () => redisAnswers(s.ports.redis, s.credentials.redisPassword),
      prepare: async () => {
        const port = await claimPort(l, s, 'redis');
        const file = writeRedisConfig(path.join(l.root, 'redis'), port, s.credentials.redisPassword);
        return { name: 'redis', cmd: 'redis-server', args: [file], env: baseEnv() };
      },
    }),
};
