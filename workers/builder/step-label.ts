/**
 * The name of a BuildKit step as its progress prints it (pure): `[<platform> <stage> <n>/<total>]
 * <instruction>`, the platform only in a multi-platform build, the stage only when it has a name,
 * the position padded to the total's width. A step is named by its position (and platform) and
 * instruction; its stage is kept apart, except the label the Dev Containers CLI gives the
 * definition's own Dockerfile stage (it names no stage of the repository's).
 */

/** The stage name the Dev Containers CLI gives the Dockerfile's last stage when it adds features. */
const CLI_STAGE_LABEL = 'dev_container_auto_added_stage_label';

const LABELLED = /^\[([^\]]*)\] (.*)$/;
const POSITION = /^\d+\/\d+$/;

export interface StepLabel {
  /** `[2/6] RUN make`, or `[linux/386 2/6] RUN make` in a multi-platform build. */
  readonly name: string;
  readonly stage?: string;
}

/** The step a vertex's first progress line names, or undefined for BuildKit's own vertices. */
export function stepLabel(line: string): StepLabel | undefined {
  const match = LABELLED.exec(line);
  if (match === null) return undefined;
  const [, inside = '', instruction = ''] = match;
  const tokens = inside.split(' ').filter((token) => token !== '');
  const position = tokens.pop();
  if (position === undefined || !POSITION.test(position)) return undefined;
  const platform = tokens.filter((token) => token.includes('/'));
  const stage = tokens.filter((token) => !token.includes('/')).join(' ');
  const name = `[${[...platform, position].join(' ')}] ${instruction}`;
  return stage === '' || stage === CLI_STAGE_LABEL ? { name } : { name, stage };
}
