/**
 * The JSON of GET /retention/plan and POST /retention/run (docs/openapi.yaml): per repository,
 * each image kept or deleted with its reason and the references a deletion removes; a run adds
 * each image's outcome and each reference's result.
 */
import type { ImageRun } from './executor.js';
import type { PlannedImage, RepositoryPlan } from './policy.js';

interface ReferenceAnswer {
  readonly reference: string;
  readonly action: 'delete' | 'move';
  readonly result?: string;
  readonly detail?: string;
}

export interface ImageAnswer {
  readonly tag: string;
  readonly digest: string;
  readonly source: string;
  readonly branch: string;
  readonly built: string;
  readonly lastServed: string;
  readonly action: 'keep' | 'delete';
  readonly reason: string;
  readonly references: readonly ReferenceAnswer[];
  readonly outcome?: string;
  readonly error?: string;
}

export interface RepositoryAnswer {
  readonly repository: string;
  readonly error?: string;
  readonly images: readonly ImageAnswer[];
}

export interface RetentionAnswer {
  readonly mode: string;
  readonly policy: Record<string, unknown>;
  readonly at: string;
  readonly repositories: readonly RepositoryAnswer[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

function imageAnswer(planned: PlannedImage): ImageAnswer {
  const { image } = planned;
  return {
    tag: image.tag,
    digest: image.digest,
    source: image.source,
    branch: image.branch,
    built: iso(image.builtMs),
    lastServed: iso(planned.lastServedMs),
    action: planned.action,
    reason: planned.reason,
    references: planned.steps.map((s) => ({ reference: s.reference, action: s.action })),
  };
}

export function planAnswer(plan: RepositoryPlan): RepositoryAnswer {
  return { repository: plan.repository, images: plan.images.map(imageAnswer) };
}

/** The plan with the outcome of each image and the result of each reference tried. */
export function runAnswer(plan: RepositoryPlan, runs: readonly ImageRun[]): RepositoryAnswer {
  return {
    repository: plan.repository,
    images: runs.map((run) => {
      const base = imageAnswer(run.planned);
      const results = new Map(run.steps.map((s) => [s.step, s]));
      return {
        ...base,
        outcome: run.outcome,
        ...(run.error === undefined ? {} : { error: run.error }),
        references: run.planned.steps.map((step) => {
          const done = results.get(step);
          return {
            reference: step.reference,
            action: step.action,
            result: done?.result ?? (run.outcome === 'unsupported' ? 'unsupported' : 'not tried'),
            ...(done?.detail === undefined ? {} : { detail: done.detail }),
          };
        }),
      };
    }),
  };
}
