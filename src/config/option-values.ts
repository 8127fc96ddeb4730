/**
 * The type of the resolved option values, derived from the option table: a row's type (or its
 * enum values) gives the value's type, a row without a default gives an optional value. The
 * compiler checks that each value fits the Config field its row says it lands in.
 */
import type { ConfigPath, ConfigValue } from './config-paths.js';
import type { OPTION_TABLE, OptionName } from './options.js';

type Table = typeof OPTION_TABLE;

/** The value of one row: by its type, or the union of its enum values. */
type RowValue<Row> = Row extends { readonly type: 'list' }
  ? string[]
  : Row extends { readonly type: 'boolean' }
    ? boolean
    : Row extends { readonly type: 'integer' | 'number' }
      ? number
      : Row extends { readonly values: readonly (infer Value)[] }
        ? Value
        : string;

type WithDefault = {
  [K in OptionName]: Table[K] extends { readonly default: unknown } ? K : never;
}[OptionName];

type Flat<T> = { [K in keyof T]: T[K] };

/** The values the option table resolves: set when the row has a default, optional otherwise. */
export type OptionValues = Flat<
  { [K in WithDefault]: RowValue<Table[K]> } & {
    [K in Exclude<OptionName, WithDefault>]?: RowValue<Table[K]>;
  }
>;

/** Where a row's value lands in Config (never: a step of config-fields.ts reads it). */
type Lands<K extends OptionName> = Table[K] extends { readonly lands: infer P extends ConfigPath }
  ? P
  : never;

/** Every place of Config an option lands in as it is. */
export type LandedPath = { [K in OptionName]: Lands<K> }[OptionName];

/** Each landing row: whether its value fits its place. */
type Fits = {
  [K in OptionName as [Lands<K>] extends [never] ? never : K]: OptionValues[K] extends ConfigValue<Lands<K>>
    ? true
    : false;
};

/** A compile error names the row whose value does not fit where it lands. */
type EveryRowFits<T extends Record<string, true>> = T;
export type CheckedRows = EveryRowFits<Fits>;
