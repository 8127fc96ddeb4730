/**
 * The types the option table gives: the resolved option values (a row's type or its enum values,
 * optional without a default) and Config's fields the options land in, nested by their dotted
 * places, so a row alone says what its field of Config is.
 */
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

/** Where a row's value lands in Config: its `lands`, else its settings key (never: nowhere). */
type LandsAt<Row> = Row extends { readonly lands: false }
  ? never
  : Row extends { readonly lands: infer Place extends string }
    ? Place
    : Row extends { readonly settingsKey: infer Place extends string }
      ? Place
      : never;

/** Every place of Config an option lands in as it is. */
export type LandedPath = { [K in OptionName]: LandsAt<Table[K]> }[OptionName];

/** A value as Config holds it: lists read-only. */
type Held<Value> = Value extends readonly (infer Item)[] ? readonly Item[] : Value;

/** The landing options by place (`service.port`, `builderName`), optional without a default. */
type ByPlace = Flat<
  { readonly [K in WithDefault as LandsAt<Table[K]>]: Held<RowValue<Table[K]>> } & {
    readonly [K in Exclude<OptionName, WithDefault> as LandsAt<Table[K]>]?: Held<RowValue<Table[K]>>;
  }
>;

type Head<Place> = Place extends `${infer Section}.${string}` ? Section : never;

/** Places nested at their dots: `{ 'service.port': number }` is `{ service: { port: number } }`. */
type Nested<T> = {
  readonly [Place in keyof T as Place extends `${string}.${string}` ? never : Place]: T[Place];
} & {
  readonly [Section in Head<keyof T>]: Nested<{
    [Place in keyof T as Place extends `${Section}.${infer Rest}` ? Rest : never]: T[Place];
  }>;
};

/** The fields of Config the options fill, as the rows' places and values say. */
export type OptionFields = Nested<ByPlace>;
