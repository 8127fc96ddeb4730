// Runs one of the stack's TypeScript servers (test/stack/servers/*.ts) as a detached Node process.
import path from 'node:path';
import { STACK_SRC } from '../layout.js';
import { baseEnv, type DetachedSpec } from '../proc.js';

const TSX_LOADER = import.meta.resolve('tsx');

export function nodeServer(name: string, script: string, args: readonly string[]): DetachedSpec {
  return {
    name,
    cmd: process.execPath,
    args: ['--import', TSX_LOADER, path.join(STACK_SRC, 'servers', script), ...args],
    env: baseEnv(),
  };
}
