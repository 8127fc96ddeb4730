// What `up` orchestrates: components with dependencies. A component either reuses what is already
// running/present or starts/creates it, and throws (with a reason) when it cannot.
import type { Layout } from '../layout.js';
import type { State } from '../state.js';

export interface Ctx {
  l: Layout;
  s: State;
}

export type Outcome = 'reused' | 'started';

export interface Component {
  name: string;
  /** Names of components that must be up first. */
  deps: readonly string[];
  /** Pid-file names of the daemons this component runs (empty for one-shot setup steps). */
  daemons: readonly string[];
  ensure(ctx: Ctx): Promise<Outcome>;
  /** A container engine: `down` stops it after everything else (builds may still use it). */
  engine?: boolean;
  /** Stops its daemons and cleans up after them (instead of a plain stop; optional). */
  cleanup?(ctx: Ctx): Promise<void>;
}
