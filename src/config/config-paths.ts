/**
 * The places of Config a named step fills: a top-level field, or a field of one of its sections.
 * Types only: the steps of config-fields.ts are keyed by them.
 */
import type { StepFields } from './types.js';

/** The fields of StepFields that are sections filled field by field. */
type StepSection = 'build' | 'events' | 'prebuilds' | 'auth' | 'redis';

/** `scratchDir`, `build.quotas`, ...: every place a step fills. */
export type StepPath =
  | Exclude<keyof StepFields, StepSection>
  | { [S in StepSection]: `${S}.${keyof StepFields[S] & string}` }[StepSection];

/** The type of the value at a step's place (optional fields include undefined). */
export type StepValue<P extends StepPath> = P extends `${infer S extends StepSection}.${infer F}`
  ? F extends keyof StepFields[S]
    ? StepFields[S][F]
    : never
  : P extends keyof StepFields
    ? StepFields[P]
    : never;
