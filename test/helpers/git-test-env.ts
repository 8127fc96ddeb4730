/** The environment of git in unit tests that make local repositories: no system or user config, a fixed author. */
import { tmpdir } from 'node:os';

export const gitTestEnv: Readonly<Record<string, string>> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid',
};
