import test from 'ava';
import { createRequire } from 'node:module';

const { keyedDockerfile } = createRequire(import.meta.url)(
  '../../../../workers/builder/keyed-dockerfile.cjs',
) as {
  keyedDockerfile: (text: string, name: string) => string;
};
const A = 'ARG ID_ARG\n';
const keyed = (text: string): string => keyedDockerfile(text, 'ID_ARG');

const CASES: ReadonlyArray<readonly [string, string, string]> = [
  ['one stage', 'FROM base\nRUN x\n', `FROM base\n${A}RUN x\n`],
  [
    'each stage, any case, indented',
    'FROM a AS b\nRUN x\n  from b\nRUN y\n',
    `FROM a AS b\n${A}RUN x\n  from b\n${A}RUN y\n`,
  ],
  [
    'global ARGs and comments untouched',
    'ARG V=1\n# FROM not\nFROM a:$V\n',
    `ARG V=1\n# FROM not\nFROM a:$V\n${A}`,
  ],
  [
    'after the continuation lines',
    'FROM \\\n  # note\n  a \\\n  AS b\nRUN x\n',
    `FROM \\\n  # note\n  a \\\n  AS b\n${A}RUN x\n`,
  ],
  ['no final newline', 'FROM a', `FROM a\n${A}`],
  ['CRLF', 'FROM a\r\nRUN x\r\n', `FROM a\r\n${A}RUN x\r\n`],
  [
    'the escape directive',
    '# escape=`\nFROM a `\n  AS b\nRUN x \\\n',
    `# escape=\`\nFROM a \`\n  AS b\n${A}RUN x \\\n`,
  ],
  [
    'not inside a heredoc',
    'FROM a\nRUN <<EOF\nFROM x\nEOF\nRUN cat <<-"END" > /f\n\tFROM y\n\tEND\nFROM b\n',
    `FROM a\n${A}RUN <<EOF\nFROM x\nEOF\nRUN cat <<-"END" > /f\n\tFROM y\n\tEND\nFROM b\n${A}`,
  ],
  [
    'two heredocs of one step',
    'FROM a\nCOPY <<one <<two /d/\nFROM x\none\nFROM y\ntwo\nFROM c\n',
    `FROM a\n${A}COPY <<one <<two /d/\nFROM x\none\nFROM y\ntwo\nFROM c\n${A}`,
  ],
  [
    'a heredoc opener of another instruction is not one',
    'FROM a\nLABEL x="<<EOF"\nFROM b\n',
    `FROM a\n${A}LABEL x="<<EOF"\nFROM b\n${A}`,
  ],
];

for (const [what, input, expected] of CASES) {
  test(`keyedDockerfile: ${what}`, (t) => {
    t.is(keyed(input), expected);
  });
}

test('keyedDockerfile: the generated Dockerfile of the Dev Containers CLI gets the ARG in every stage', (t) => {
  const generated = [
    'ARG _DEV_CONTAINERS_BASE_IMAGE=placeholder',
    'FROM img AS dev_container_auto_added_stage_label',
    'RUN --mount=type=secret,id=npmrc,required=true sh -c "x"',
    'FROM $_DEV_CONTAINERS_BASE_IMAGE AS dev_containers_target_stage',
    'LABEL devcontainer.metadata="[]"',
    '',
  ].join('\n');
  const lines = keyed(generated).split('\n');
  t.deepEqual(
    lines.map((line, i) => (line === 'ARG ID_ARG' ? lines[i - 1]?.split(' ')[0] : undefined)).filter(Boolean),
    ['FROM', 'FROM'],
  );
});
