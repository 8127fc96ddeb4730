/**
 * Carries out the deletions of a repository plan against the registry: per image, its build-key
 * moves, then its manifest (the registry drops every tag naming it), its children, its signatures.
 * A registry that cannot delete (405, UNSUPPORTED) is found with one probe first: every image is
 * then `unsupported` and nothing at all is written.
 */
import { LIMITS, type RegistryCall, type RegistryClient, errorCodes } from '../registry/client.js';
import { putManifest } from '../registry/push.js';
import { manifestMediaType } from '../registry/relabel.js';
import { reasonOf, serviceError } from '../errors/errors.js';
import { deleteDone, deleteUnsupported } from '../registry/delete.js';
import type { DeleteStep, PlannedImage, RepositoryPlan } from './policy.js';
import { unexpectedAnswer } from '../registry/reference.js';

type ImageOutcome = 'kept' | 'deleted' | 'unsupported' | 'error';
type StepResult = 'deleted' | 'moved' | 'absent' | 'unsupported' | 'error';

export interface StepOutcome {
  readonly step: DeleteStep;
  readonly result: StepResult;
  readonly detail?: string;
}

export interface ImageRun {
  readonly planned: PlannedImage;
  readonly outcome: ImageOutcome;
  readonly steps: readonly StepOutcome[];
  readonly error?: string;
}

/** A digest no registry holds: deleting it answers 404 where deletion works, 405 where it does not. */
const PROBE_DIGEST = `sha256:${'0'.repeat(64)}`;

/** Whether the registry deletes manifests in this repository (one DELETE of a digest it cannot hold). */
async function deletesManifests(client: RegistryClient, call: RegistryCall): Promise<boolean> {
  const res = await client.request(call, 'DELETE', `${call.ref.name}/manifests/${PROBE_DIGEST}`, {
    maxBytes: LIMITS.errorBytes,
  });
  return !deleteUnsupported(res.status, errorCodes(res.body));
}

async function deleteManifest(
  client: RegistryClient,
  call: RegistryCall,
  digest: string,
): Promise<StepResult> {
  const res = await client.request(call, 'DELETE', `${call.ref.name}/manifests/${digest}`, {
    maxBytes: LIMITS.errorBytes,
  });
  if (deleteDone(res.status)) return 'deleted';
  if (res.status === 404) return 'absent';
  if (deleteUnsupported(res.status, errorCodes(res.body))) return 'unsupported';
  throw unexpectedAnswer(call.ref, res.status, call.ref.target.atDigest(digest));
}

/** The key tag written anew over the kept image's manifest (same bytes, so the same digest). */
async function moveKey(client: RegistryClient, call: RegistryCall, step: DeleteStep): Promise<StepResult> {
  const heir = await client.getManifest(call, step.to ?? '');
  if (heir === undefined)
    throw serviceError('IMAGE_NOT_FOUND', {
      image: call.ref.target.atDigest(step.to ?? ''),
    });
  await putManifest(client, call, step.target, heir.body, manifestMediaType(heir));
  return 'moved';
}

/** One image's steps in order; the first failure stops it (what is left stays for the next run). */
async function runImage(
  client: RegistryClient,
  call: RegistryCall,
  planned: PlannedImage,
): Promise<ImageRun> {
  const done: StepOutcome[] = [];
  for (const step of planned.steps) {
    try {
      const result =
        step.action === 'move'
          ? await moveKey(client, call, step)
          : await deleteManifest(client, call, step.target);
      done.push({ step, result });
      if (result === 'unsupported') return { planned, outcome: 'unsupported', steps: done };
    } catch (err) {
      done.push({ step, result: 'error', detail: reasonOf(err) });
      return { planned, outcome: 'error', steps: done, error: reasonOf(err) };
    }
  }
  return { planned, outcome: 'deleted', steps: done };
}

/** Runs a repository plan: kept images stay `kept`; each deleted one gets its outcome. */
export async function executePlan(
  client: RegistryClient,
  call: RegistryCall,
  plan: RepositoryPlan,
  onStep: (outcome: StepOutcome) => void,
): Promise<ImageRun[]> {
  const deleting = plan.images.filter((p) => p.action === 'delete');
  const supported = deleting.length === 0 || (await deletesManifests(client, call));
  const runs: ImageRun[] = [];
  for (const planned of plan.images) {
    if (planned.action === 'keep') runs.push({ planned, outcome: 'kept', steps: [] });
    else if (!supported) runs.push({ planned, outcome: 'unsupported', steps: [] });
    else {
      const run = await runImage(client, call, planned);
      run.steps.forEach(onStep);
      runs.push(run);
    }
  }
  return runs;
}
