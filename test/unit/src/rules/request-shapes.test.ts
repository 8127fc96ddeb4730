import test from 'ava';
import { isServiceError } from '../../../../src/errors/errors.js';
import { parseBuildsQuery } from '../../../../src/http/builds-query.js';
import { parseDevcontainerQuery } from '../../../../src/http/registry-schemas.js';
import { BUILD_STATUSES } from '../../../../src/observability/metrics.js';
import { MAX_REPOSITORY_FILTER_LENGTH } from '../../../../src/rules/request-shapes.js';

const refusal = (parse: () => unknown): string => {
  try {
    parse();
  } catch (err) {
    if (isServiceError(err)) return err.message;
    throw err;
  }
  throw new Error('accepted');
};

test('GET /builds: every status the filter takes is named in the words of its 400', (t) => {
  const words = refusal(() => parseBuildsQuery({ status: 'nope' }));
  for (const status of ['running', ...BUILD_STATUSES]) {
    t.deepEqual(parseBuildsQuery({ status }), { status });
    t.true(words.includes(status), `${status} is not named in: ${words}`);
  }
});

test('GET /builds: the repository filter is as long as its words say, and no longer', (t) => {
  const longest = 'r'.repeat(MAX_REPOSITORY_FILTER_LENGTH);
  t.deepEqual(parseBuildsQuery({ repository: longest }), { repository: longest });
  const words = refusal(() => parseBuildsQuery({ repository: `${longest}r` }));
  t.true(words.includes(`at most ${MAX_REPOSITORY_FILTER_LENGTH} characters`), words);
});

test('GET /builds and GET /devcontainer: each refused field is named with its rule', (t) => {
  t.is(
    refusal(() => parseBuildsQuery({ requestId: '', colour: 'red' })),
    'invalid filters for GET /builds: no other filter (filters: requestId, repository, status, branch, trigger, caller, tenant; page: limit, after); ' +
      'requestId (1 to 128 characters of A-Z a-z 0-9 . _ : -)',
  );
  t.is(
    refusal(() => parseDevcontainerQuery({ registry: 'r.io', name: 'a', platform: 'linux' })),
    'missing or invalid query parameters: tag (required, non-empty string); platform (optional, os/arch[/variant])',
  );
});
