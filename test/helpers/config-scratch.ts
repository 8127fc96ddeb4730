// A test file's scratch directory for configuration files, removed after the file's tests.
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load.js';

export interface ConfigScratch {
  /** A fresh temp directory for the test file's configuration files, removed after its tests. */
  readonly dir: string;
  /** An environment whose HOME is `dir` and whose DOCKER_CONFIG has no config.json (`{auths: {}}`). */
  readonly baseEnv: { readonly DOCKER_CONFIG: string; readonly HOME: string };
  /** Writes `content` to a new file with extension `ext` in `dir` and returns its path. */
  file(ext: string, content: string): string;
  /** The problems startup reports for `argv` with `baseEnv` and `env` ([] when it loads). */
  problemsOf(argv: string[], env?: Record<string, string>): string[];
}

export function configScratch(prefix: string): ConfigScratch {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  test.after.always(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const baseEnv = { DOCKER_CONFIG: join(dir, 'no-docker'), HOME: dir };
  return {
    dir,
    baseEnv,
    file(ext, content) {
      const path = join(dir, `f${n++}${ext}`);
      writeFileSync(path, content);
      return path;
    },
    problemsOf(argv, env = {}) {
      try {
        loadConfig({ argv, env: { ...baseEnv, ...env } });
      } catch (err) {
        if (err instanceof ConfigError) return [...err.problems];
        throw err;
      }
      return [];
    },
  };
}
