/**
 * One build's place in the fleet (docs/fleet.md): one slot per platform placed natively (or one
 * slot for the whole build), each on a builder with its own failover order. Before the first step
 * each slot's builder must answer, or the slot moves on in its order (one img log line naming
 * both); then the build uses that builder's buildx builder, or one with a node per builder.
 */
import { serviceError } from '../../../src/errors/errors.js';
import type { BuildStatus } from '../../../src/observability/metrics.js';
import { RETRY_AFTER } from '../../common/retry-after.js';
import type {
  BuilderHandle,
  BuilderNode,
  BuilderSpec,
  EnsureOptions,
  RemoteBuilder,
} from '../remote-builder.js';

export interface Member {
  readonly spec: BuilderSpec;
  readonly remote: RemoteBuilder;
  /** The platforms its endpoint declares ([] = any). */
  readonly platforms: readonly string[];
  inFlight: number;
}

/** One platform of the build (or, without `platform`, the whole build) and where it may run. */
export interface Slot {
  readonly platform?: string;
  readonly order: readonly Member[];
  /** The first `native` members of `order` declare the platform. */
  readonly native: number;
  member: Member;
}

/** What a placement uses of its fleet. */
export interface PlacementFleet {
  readonly nativeOnly: boolean;
  check(endpoint: string): Promise<string | undefined>;
  /** The next builder with room for a slot leaving `from`, healthy first. */
  next(order: readonly Member[], from: Member, taken: ReadonlySet<Member>): Member | undefined;
  take(member: Member): void;
  release(member: Member, status?: BuildStatus): void;
  /** The buildx builder with one node per group (made once per set of nodes). */
  multiNode(nodes: readonly BuilderNode[]): BuilderHandle;
}

export type { PlatformBuilder } from '../../../src/builds/types.js';
import type { PlatformBuilder } from '../../../src/builds/types.js';

/** 503: no builder of `platform` answers, and only native builders may build it. */
export const platformUnavailable = (platform: string) =>
  serviceError('PLATFORM_BUILDERS_UNAVAILABLE', { platform }, { retryAfterSeconds: RETRY_AFTER.default });

export class Placement implements BuilderHandle {
  readonly #fleet: PlacementFleet;
  readonly #slots: readonly Slot[];
  #finished = false;
  /** Called when a slot moves to another builder (its record follows). */
  onMove: ((endpoint: string, builders: PlatformBuilder[] | undefined) => void) | undefined;

  constructor(fleet: PlacementFleet, slots: readonly Slot[]) {
    this.#fleet = fleet;
    this.#slots = slots;
    for (const member of this.#members()) fleet.take(member);
  }

  /** The builder of the first slot (GET /builds `builder`). */
  get endpoint(): string {
    return (this.#slots[0] as Slot).member.spec.endpoint;
  }

  get configured(): boolean {
    return true;
  }

  /** Each builder and its platforms, when platforms are placed one by one. */
  get builders(): PlatformBuilder[] | undefined {
    if (this.#slots[0]?.platform === undefined) return undefined;
    return this.#groups().map((node) => ({ builder: node.endpoint, platforms: node.platforms }));
  }

  /** What GET /builds shows of the placement. */
  record(): { builder: string; builders?: PlatformBuilder[] } {
    const builders = this.builders;
    return { builder: this.endpoint, ...(builders === undefined ? {} : { builders }) };
  }

  get name(): string {
    return this.#handle().name ?? '';
  }

  /**
   * Before the build's first step: each slot's builder answers, or the slot moves on (one img log
   * line naming both); a slot with nowhere to go fails the build (503 with only native platforms).
   */
  async ensure(options: EnsureOptions): Promise<void> {
    const answers = new Map<string, Promise<string | undefined>>();
    const check = (endpoint: string): Promise<string | undefined> => {
      const known = answers.get(endpoint) ?? this.#fleet.check(endpoint);
      answers.set(endpoint, known);
      return known;
    };
    for (const slot of this.#slots) {
      for (let reason = await check(slot.member.spec.endpoint); reason !== undefined;) {
        this.#move(slot, reason, options);
        reason = await check(slot.member.spec.endpoint);
      }
    }
    for (const slot of this.#slots) if (slot.platform !== undefined) options.log.write(slotLine(slot));
    await this.#handle().ensure(options);
  }

  #move(slot: Slot, reason: string, options: EnsureOptions): void {
    const from = slot.member;
    const what = slot.platform === undefined ? 'the build' : slot.platform;
    const next = this.#fleet.next(slot.order, from, new Set(this.#members()));
    if (next === undefined) {
      options.log.write(
        `# builder ${from.spec.endpoint} unreachable: ${reason}; no other builder can take ${what}\n`,
      );
      if (this.#fleet.nativeOnly && slot.platform !== undefined) {
        throw platformUnavailable(slot.platform);
      }
      throw serviceError('STEP_FAILED', { step: 'image build' }, { logId: options.log.id, cause: reason });
    }
    const where = slot.platform === undefined ? '' : ` ${slot.platform}`;
    options.log.write(
      `# builder ${from.spec.endpoint} unreachable (${reason}): building${where} on ${next.spec.endpoint} instead\n`,
    );
    const before = new Set(this.#members());
    slot.member = next;
    const after = new Set(this.#members());
    if (!before.has(next)) this.#fleet.take(next);
    if (!after.has(from)) this.#fleet.release(from);
    this.onMove?.(this.endpoint, this.builders);
  }

  /** The build ended (once): its places are free and it is counted on each of its builders. */
  finish(status: BuildStatus): void {
    if (this.#finished) return;
    this.#finished = true;
    for (const member of this.#members()) this.#fleet.release(member, status);
  }

  #members(): Member[] {
    return [...new Set(this.#slots.map((slot) => slot.member))];
  }

  /** The slots' platforms grouped by builder, in the slots' order. */
  #groups(): BuilderNode[] {
    return this.#members().map((member) => ({
      endpoint: member.spec.endpoint,
      platforms: this.#slots.flatMap((slot) =>
        slot.member === member && slot.platform !== undefined ? [slot.platform] : [],
      ),
    }));
  }

  /** One builder: its own buildx builder; several: one with a node per builder. */
  #handle(): BuilderHandle {
    const members = this.#members();
    return members.length === 1 ? (members[0] as Member).remote : this.#fleet.multiNode(this.#groups());
  }
}

function slotLine(slot: Slot): string {
  const member = slot.member;
  const native = slot.order.indexOf(member) < slot.native;
  const why = native
    ? `declares ${member.platforms.join(', ')}`
    : member.platforms.length === 0
      ? 'declares no platform: emulated where needed'
      : `declares ${member.platforms.join(', ')}: emulated where needed`;
  return `# platform ${slot.platform ?? ''}: builder ${member.spec.endpoint} (${why})\n`;
}
