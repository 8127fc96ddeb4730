/**
 * The places of Config a value is put in: a top-level field, or a field of one of its sections.
 * Types only: the option table and the steps of config-fields.ts name places with them.
 */
import type { Config } from './types.js';

/** The fields of Config that are objects filled field by field. */
export type ConfigSection = 'build' | 'retention' | 'events' | 'prebuilds' | 'auth';

/** `port`, `build.noCache`, ...: every place of Config. */
export type ConfigPath =
  | Exclude<keyof Config, ConfigSection>
  | { [S in ConfigSection]: `${S}.${keyof Config[S] & string}` }[ConfigSection];

/** The type of the value at a place (optional fields include undefined). */
export type ConfigValue<P extends ConfigPath> = P extends `${infer S extends ConfigSection}.${infer F}`
  ? F extends keyof Config[S]
    ? Config[S][F]
    : never
  : P extends keyof Config
    ? Config[P]
    : never;
