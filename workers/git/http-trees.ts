/**
 * A commit's trees over smart HTTP without a git process: one protocol-v2 `fetch` of the commit,
 * depth 1, `blob:none` (what the clone's first step fetches), read in memory (pack.ts). The build key
 * of an unchanged push needs no more; whatever needs files is cloned by git (tree-clone.ts).
 * Undefined whenever git would have to say why (a server without v2 or filters, any failure).
 */
import type { StepDeps } from '../common/step-deps.js';
import type { BuildPlan } from '../plan/plan-types.js';
import { smartHttp } from './http-refs.js';
import { readPack, type PackObject } from './pack.js';
import type { TreeEntry } from './tree-listing.js';
import { treeEntries, type TreeObjectEntry } from './tree-object.js';

/** A tree-only pack beyond this is left to git. */
const MAX_PACK_BYTES = 64 * 1024 * 1024;
const RESULT_TYPE = 'application/x-git-upload-pack-result';

const pkt = (line: string): string => `${(Buffer.byteLength(line) + 4).toString(16).padStart(4, '0')}${line}`;

/** What one v2 `fetch` asks for: objects (and what they reach), less what `haves` reach. */
export interface FetchWants {
  readonly wants: readonly string[];
  readonly haves?: readonly string[];
  /** `deepen 1`: the commit alone, not its history. */
  readonly shallow?: boolean;
}

/** A v2 `fetch` request, trees and no blob (`filter blob:none`), sent with `done`: no negotiation. */
export function fetchBody(fetch: FetchWants): Buffer {
  return Buffer.from(
    [
      pkt('command=fetch\n'),
      pkt('agent=git/2-image-build-service\n'),
      pkt('object-format=sha1\n'),
      '0001',
      pkt('no-progress\n'),
      pkt('ofs-delta\n'),
      ...(fetch.shallow === true ? [pkt('deepen 1\n')] : []),
      pkt('filter blob:none\n'),
      ...fetch.wants.map((id) => pkt(`want ${id}\n`)),
      ...(fetch.haves ?? []).map((id) => pkt(`have ${id}\n`)),
      pkt('done\n'),
      '0000',
    ].join(''),
  );
}

/** The pack of a v2 `fetch` response (its `packfile` section, side band 1), or undefined. */
export function packOfResponse(body: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let inPack = false;
  let at = 0;
  while (at + 4 <= body.length) {
    const head = body.toString('latin1', at, at + 4);
    if (!/^[0-9a-f]{4}$/.test(head)) return undefined;
    const size = Number.parseInt(head, 16);
    if (size < 4) {
      at += 4;
      if (size === 0) return inPack ? Buffer.concat(parts) : undefined;
      continue;
    }
    if (at + size > body.length) return undefined;
    const payload = body.subarray(at + 4, at + size);
    at += size;
    if (!inPack) {
      inPack = payload.toString('latin1') === 'packfile\n';
      continue;
    }
    const band = payload[0];
    if (band === 1) parts.push(payload.subarray(1));
    else if (band !== 2) return undefined;
  }
  return undefined;
}

/** A commit's trees in memory: what `git ls-tree -r -t --full-tree <commit> -- <paths>` lists. */
export class CommitTrees {
  readonly #objects: ReadonlyMap<string, PackObject>;
  readonly #root: string;

  constructor(objects: ReadonlyMap<string, PackObject>, root: string) {
    this.#objects = objects;
    this.#root = root;
  }

  /** The trees of `commit` in `objects`, or undefined when they are not all there. */
  static of(objects: ReadonlyMap<string, PackObject>, commit: string): CommitTrees | undefined {
    const object = objects.get(commit);
    const root =
      object?.type === 'commit'
        ? /^tree ([0-9a-f]{40})\n/.exec(object.data.toString('latin1'))?.[1]
        : undefined;
    if (root === undefined) return undefined;
    for (const o of objects.values())
      if (o.type === 'tree' && treeEntries(o.data).some((e) => e.type === 'tree' && !objects.has(e.oid)))
        return undefined;
    return objects.get(root)?.type === 'tree' ? new CommitTrees(objects, root) : undefined;
  }

  #entries(tree: string): ReturnType<typeof treeEntries> {
    return this.tree(tree) ?? [];
  }

  /** The entries of tree `oid` when this commit has it; undefined otherwise. */
  tree(oid: string): TreeObjectEntry[] | undefined {
    const object = this.#objects.get(oid);
    return object?.type === 'tree' ? treeEntries(object.data) : undefined;
  }

  /** Everything under tree `oid` at `prefix`, trees included. */
  #below(oid: string, prefix: string, out: TreeEntry[]): void {
    for (const e of this.#entries(oid)) {
      const path = `${prefix}/${e.name}`;
      out.push({ mode: e.mode, type: e.type, oid: e.oid, path });
      if (e.type === 'tree') this.#below(e.oid, path, out);
    }
  }

  /** The entries of `paths` (repository-relative) and everything under them, and the trees on the way. */
  list(paths: readonly string[]): TreeEntry[] {
    const byPath = new Map<string, TreeEntry>();
    for (const path of paths) {
      let tree: string | undefined = this.#root;
      const parts = path.split('/').filter((p) => p !== '');
      for (const [i, name] of parts.entries()) {
        const entry: TreeObjectEntry | undefined =
          tree === undefined ? undefined : this.#entries(tree).find((e) => e.name === name);
        if (entry === undefined) break;
        const at = parts.slice(0, i + 1).join('/');
        byPath.set(at, { mode: entry.mode, type: entry.type, oid: entry.oid, path: at });
        if (i === parts.length - 1 && entry.type === 'tree') {
          const below: TreeEntry[] = [];
          this.#below(entry.oid, at, below);
          for (const b of below) byPath.set(b.path, b);
        }
        tree = entry.type === 'tree' ? entry.oid : undefined;
      }
    }
    return [...byPath.values()];
  }
}

/**
 * The objects of one v2 `fetch` over smart HTTP (trees and commits, no blob), or undefined (a
 * server without v2 or filters, any failure). Only a cancellation throws.
 */
export async function fetchObjects(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'>,
  signal: AbortSignal,
  fetch: FetchWants,
  timeoutMs: number,
): Promise<Map<string, PackObject> | undefined> {
  try {
    const send = await smartHttp(plan, deps);
    if (send === undefined) return undefined;
    const res = await send(
      {
        path: '/git-upload-pack',
        headers: {
          'content-type': 'application/x-git-upload-pack-request',
          accept: RESULT_TYPE,
          'git-protocol': 'version=2',
        },
        body: fetchBody(fetch),
        maxBytes: MAX_PACK_BYTES,
        timeoutMs,
      },
      signal,
    );
    if (res.status !== 200 || res.type !== RESULT_TYPE) return undefined;
    const pack = packOfResponse(res.body);
    return pack === undefined ? undefined : readPack(pack);
  } catch (err) {
    if (signal.aborted) throw err;
    return undefined;
  }
}

/**
 * The trees of `commit` from one v2 `fetch` over smart HTTP, or undefined (git clones instead).
 * Only a cancellation throws.
 */
export async function fetchTrees(
  plan: BuildPlan,
  deps: Pick<StepDeps, 'config'>,
  signal: AbortSignal,
  commit: string,
): Promise<CommitTrees | undefined> {
  const timeoutMs = (deps.config.build.cloneTimeoutSeconds || 60) * 1000;
  const objects = await fetchObjects(plan, deps, signal, { wants: [commit], shallow: true }, timeoutMs);
  return objects === undefined ? undefined : CommitTrees.of(objects, commit);
}
