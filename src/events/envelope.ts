/**
 * The CloudEvents of a finished build and of a deleted image. `data` is the CDEvent (context,
 * subject, customData) built from named fields only: never the request, a credential or a build
 * secret. Pure.
 */
import { randomUUID } from 'node:crypto';
import {
  ACCESS_DECIDED,
  ARTIFACT_PUBLISHED,
  BUDGET_EXCEEDED,
  BUDGET_WARNING,
  BUILD_FINISHED,
  IMAGE_DELETED,
} from '../rules/event-types.js';
import { ociPurl, type ImageParts } from './purl.js';
import type { CloudEvent, EndedBuild } from './types.js';
import { ImageTarget } from '../rules/image-target.js';
import type { RequestedBy } from '../rules/caller.js';
import type { BudgetCrossing } from '../usage/budget.js';

/** The CDEvents specification version of the events' context. */
const CDEVENTS_VERSION = '0.4.1';

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** Only the defined fields of `fields`. */
function defined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

function cloudEvent(
  source: string,
  type: string,
  subject: string,
  cdevent: (id: string, time: string) => Record<string, unknown>,
): CloudEvent {
  const id = randomUUID();
  const time = new Date().toISOString();
  return {
    specversion: '1.0',
    id,
    source,
    type,
    time,
    subject,
    datacontenttype: 'application/json',
    data: cdevent(id, time),
  };
}

const context = (id: string, source: string, type: string, timestamp: string) => ({
  version: CDEVENTS_VERSION,
  id,
  source,
  type,
  timestamp,
});

/** The pushed image of a successful answer, when it names one. */
function imageOf(build: EndedBuild): (ImageParts & { image: string }) | undefined {
  const body = build.answer?.body ?? {};
  const [image, registry, name, digest] = [
    text(body.image),
    text(body.registry),
    text(body.name),
    text(body.digest),
  ];
  if (image === undefined || registry === undefined || name === undefined || digest === undefined)
    return undefined;
  return { image, registry, name, digest, ...(text(body.tag) === undefined ? {} : { tag: text(body.tag) }) };
}

function buildFinished(build: EndedBuild, source: string): CloudEvent {
  const body = build.answer?.body ?? {};
  const image = imageOf(build);
  const success = build.status === 'success';
  const subject = image?.image ?? build.image;
  return cloudEvent(source, BUILD_FINISHED, subject, (id, time) => ({
    context: context(id, source, BUILD_FINISHED, time),
    subject: {
      id: build.id,
      source,
      type: 'build',
      content: image === undefined ? {} : { artifactId: ociPurl(image) },
    },
    customDataContentType: 'application/json',
    customData: defined({
      outcome: success ? 'success' : 'failure',
      status: build.status,
      repository: build.repository,
      branch: build.branch,
      commit: build.commit ?? text(body.commit),
      image: subject,
      digest: image?.digest,
      builder: build.builder,
      trigger: build.trigger ?? 'api',
      requestedBy: build.requestedBy,
      gitCloneLogId: build.gitCloneLogId,
      imageBuildLogId: build.imageBuildLogId ?? text(body.imageBuildLogId),
      durationSeconds: build.durationSeconds,
      error: success ? undefined : (build.error ?? text(body.error)),
      code: success ? undefined : text(body.code),
    }),
  }));
}

function artifactPublished(
  build: EndedBuild,
  image: ImageParts & { image: string },
  source: string,
): CloudEvent {
  const purl = ociPurl(image);
  const body = build.answer?.body ?? {};
  return cloudEvent(source, ARTIFACT_PUBLISHED, image.image, (id, time) => ({
    context: context(id, source, ARTIFACT_PUBLISHED, time),
    subject: { id: purl, source, type: 'artifact', content: {} },
    customDataContentType: 'application/json',
    customData: defined({
      image: image.image,
      registry: image.registry,
      name: image.name,
      tag: image.tag,
      digest: image.digest,
      reused: typeof body.reused === 'boolean' ? body.reused : undefined,
      buildId: build.id,
      repository: build.repository,
      requestedBy: build.requestedBy,
      commit: build.commit ?? text(body.commit),
      imageBuildLogId: build.imageBuildLogId ?? text(body.imageBuildLogId),
    }),
  }));
}

/** build.finished, then artifact.published when the build answered an image. */
export function buildEvents(build: EndedBuild, source: string): CloudEvent[] {
  const image = build.status === 'success' ? imageOf(build) : undefined;
  const finished = buildFinished(build, source);
  return image === undefined ? [finished] : [finished, artifactPublished(build, image, source)];
}

/** What retention (or DELETE /image) tells of an image it deleted. */
export interface DeletedImage extends ImageParts {
  readonly reason: string;
}

export function imageDeletedEvent(deleted: DeletedImage, source: string): CloudEvent {
  const reference = ImageTarget.of(deleted).atDigest(deleted.digest);
  return cloudEvent(source, IMAGE_DELETED, reference, (id, time) => ({
    context: context(id, source, IMAGE_DELETED, time),
    subject: { id: ociPurl(deleted), source, type: 'artifact', content: {} },
    customDataContentType: 'application/json',
    customData: defined({
      registry: deleted.registry,
      name: deleted.name,
      tag: deleted.tag,
      digest: deleted.digest,
      reason: deleted.reason,
    }),
  }));
}

/** What the audit trail tells of an access decision (never a token). */
export interface DecidedAccess {
  readonly decision: string;
  readonly action: string;
  readonly resource: Readonly<Record<string, string>>;
  readonly requestId: string;
  readonly identity?: RequestedBy;
  readonly rule?: string;
  readonly reason?: string;
}

export function accessDecidedEvent(decided: DecidedAccess, source: string): CloudEvent {
  const subject = `${decided.action} ${Object.values(decided.resource).join(' ')}`.trim();
  return cloudEvent(source, ACCESS_DECIDED, subject, (id, time) => ({
    context: context(id, source, ACCESS_DECIDED, time),
    subject: { id: decided.requestId, source, type: 'access', content: {} },
    customDataContentType: 'application/json',
    customData: defined({ ...decided }),
  }));
}

export function budgetEvent(crossing: BudgetCrossing, source: string): CloudEvent {
  const type = crossing.kind === 'warning' ? BUDGET_WARNING : BUDGET_EXCEEDED;
  const { kind: _kind, ...fields } = crossing;
  return cloudEvent(source, type, crossing.tenant, (id, time) => ({
    context: context(id, source, type, time),
    subject: { id: `${crossing.tenant} ${crossing.month}`, source, type: 'budget', content: {} },
    customDataContentType: 'application/json',
    customData: { ...fields },
  }));
}
