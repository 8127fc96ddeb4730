// The one loader of the side files and the option rows' places: a file over the size limit is
// refused naming it (never its content), a file just under it loads, no two rows land in the
// same place of Config, and a row with a settings key lands at it (one shape for both).
import test from 'ava';
import { MAX_CONFIG_FILE_BYTES } from '../../../../src/config/files.js';
import { OPTIONS, optionByName } from '../../../../src/config/options.js';
import { fileWhat, SIDE_FILES } from '../../../../src/config/side-files.js';
import { configScratch } from '../../../helpers/config-scratch.js';

const { file, problemsOf } = configScratch('ibs-side-files-');
const CANARY = 'side-file-canary-7f3a';

/** A YAML list `[]` padded with a comment up to `bytes`, the comment holding the canary. */
function paddedList(bytes: number): string {
  const head = `# ${CANARY} `;
  return `${head}${'x'.repeat(bytes - head.length - 4)}\n[]\n`;
}

const tooLarge = file('.yaml', paddedList(MAX_CONFIG_FILE_BYTES + 1));
const justUnder = file('.yaml', paddedList(MAX_CONFIG_FILE_BYTES));

for (const [name, side] of Object.entries(SIDE_FILES)) {
  const { flag } = optionByName(side.option);
  test(`${name}: a file over the size limit is refused, naming the file and not its content`, (t) => {
    const problems = problemsOf([flag, tooLarge]);
    t.deepEqual(problems, [
      `${fileWhat(side)} ${tooLarge}: is larger than ${MAX_CONFIG_FILE_BYTES} bytes (${MAX_CONFIG_FILE_BYTES + 1})`,
    ]);
    t.false(problems.join('\n').includes(CANARY));
  });

  test(`${name}: a file at the size limit loads`, (t) => {
    t.deepEqual(problemsOf([flag, justUnder]), []);
  });
}

test('the settings file has the same size limit', (t) => {
  const settings = file('.yaml', paddedList(MAX_CONFIG_FILE_BYTES + 1));
  t.deepEqual(problemsOf(['--settings', settings]), [
    `settings file ${settings}: is larger than ${MAX_CONFIG_FILE_BYTES} bytes (${MAX_CONFIG_FILE_BYTES + 1})`,
  ]);
});

test('no two option rows land in the same place of Config', (t) => {
  const places = OPTIONS.flatMap((option) => (option.lands === undefined ? [] : [option.lands]));
  t.true(places.length > 30, 'most options land as they are');
  t.deepEqual([...new Set(places)], places);
});

test('a row with a settings key lands at that path of Config, or a named step reads it', (t) => {
  const elsewhere = OPTIONS.filter(
    (option) =>
      option.settingsKey !== undefined && option.lands !== undefined && option.lands !== option.settingsKey,
  );
  t.deepEqual(
    elsewhere.map((option) => option.name),
    [],
  );
  const keyless = OPTIONS.filter((option) => option.settingsKey === undefined && option.lands !== undefined);
  t.deepEqual(
    keyless.map((option) => option.lands),
    ['builderName', 'settingsPath'],
    'the options without a settings key land at their name',
  );
});
