import test from 'ava';
import {
  BusyError,
  ERROR_CLASSES,
  ERRORS,
  type ErrorCode,
  ImageNotFoundError,
  serviceError,
  withLogId,
} from '../../../../src/errors/errors.js';

test('the text is the table text, each value shown as the table says', (t) => {
  t.is(serviceError('NOT_FOUND').message, 'not found');
  t.is(
    serviceError('INVALID_BRANCH', { branch: 'a "b" c' }).message,
    'invalid branch "a \\"b\\" c": must be a valid git branch or tag name (git check-ref-format) not starting with "-"',
  );
  t.is(serviceError('INVALID_TAG', { tag: '' }).message.slice(0, 8), 'tag: "" ');
  const id = serviceError('INVALID_BUILD_SECRET_ID', { id: 'x'.repeat(200) }).message;
  t.true(id.includes(`invalid secret id "${'x'.repeat(80)}": `), id);
  t.is(
    serviceError('INVALID_DELIVERY_FILTERS', { filters: ['one', 'two'] }).message,
    'invalid filters for GET /events/deliveries: one; two',
  );
});

test('parameters and filters are named by their rule, an unknown one by its name', (t) => {
  const query = serviceError('INVALID_QUERY', { parameters: ['tag', 'platform', 'odd'] }).message;
  t.is(
    query,
    'missing or invalid query parameters: tag (required, non-empty string); platform (optional, os/arch[/variant]); odd',
  );
  const filters = serviceError('INVALID_BUILD_FILTERS', { filters: ['other'] }).message;
  t.is(
    filters,
    'invalid filters for GET /builds: no other filter (filters: requestId, repository, status, branch, trigger, caller, tenant; page: limit, after)',
  );
});

test('PLATFORM_NOT_FOUND lists the platforms in its text and, as given, in availablePlatforms', (t) => {
  const some = serviceError('PLATFORM_NOT_FOUND', {
    platform: 'linux/s390x',
    image: 'r.io/a:b',
    available: ['linux/amd64', 'linux/arm64'],
  });
  t.deepEqual(some.toBody(), {
    error: 'platform linux/s390x not found in r.io/a:b; available: linux/amd64, linux/arm64',
    availablePlatforms: ['linux/amd64', 'linux/arm64'],
  });
  const none = serviceError('PLATFORM_NOT_FOUND', {
    platform: 'linux/s390x',
    image: 'r.io/a:b',
    available: [],
  });
  t.deepEqual(none.toBody(), {
    error: 'platform linux/s390x not found in r.io/a:b; available: none',
    availablePlatforms: [],
  });
});

test('Retry-After: fixed by the table, or given by the thrower, and absent elsewhere', (t) => {
  t.deepEqual(serviceError('RETENTION_RUNNING').details.headers, { 'Retry-After': '60' });
  t.deepEqual(serviceError('STORE_UNAVAILABLE').details.headers, { 'Retry-After': '10' });
  const busy = serviceError('BUSY', { running: 4 }, { retryAfterSeconds: 17 });
  t.deepEqual(busy.details.headers, { 'Retry-After': '17' });
  t.is(busy.status, 429);
  t.is(serviceError('INVALID_JSON').details.headers, undefined);
  t.is(serviceError('BUILD_NOT_FOUND', { id: 'b' }).details.headers, undefined);
});

/** The placeholders whose value is a list. */
const LISTS = ['filters', 'parameters', 'available'];

test('each code has its own class: an error is an instance of its class and of no other', (t) => {
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    const names = [...ERRORS[code].text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
    const values = Object.fromEntries(names.map((name) => [name, LISTS.includes(name) ? ['x'] : 'x']));
    const err = serviceError(code, values as never, { retryAfterSeconds: 1 } as never);
    t.true(err instanceof ERROR_CLASSES[code], code);
    t.is(err.status, ERRORS[code].status, code);
    const others = (Object.keys(ERRORS) as ErrorCode[]).filter((other) => other !== code);
    t.false(
      others.some((other) => err instanceof ERROR_CLASSES[other]),
      `${code} is an instance of another code's class`,
    );
  }
  t.true(serviceError('BUSY', { running: 1 }, { retryAfterSeconds: 1 }) instanceof BusyError);
  t.false(serviceError('NOT_FOUND') instanceof ImageNotFoundError);
});

test('the options reach the error: the log id in the body, the cause kept off it', (t) => {
  const cause = new Error('disk full');
  const err = serviceError('STEP_FAILED', { step: 'git clone' }, { logId: 'L1', cause });
  t.is(err.cause, cause);
  t.deepEqual(err.toBody(), { error: 'git clone failed', logId: 'L1' });
  const again = withLogId(serviceError('BUSY', { running: 2 }, { retryAfterSeconds: 5 }), 'L2');
  t.true(again instanceof BusyError);
  t.deepEqual(again.details.headers, { 'Retry-After': '5' });
  t.is(again.toBody().logId, 'L2');
});

/** The codes whose text is not a literal type (a `+` widens it to string, leaving its values untyped). */
type WideTexts = { [C in ErrorCode]: string extends (typeof ERRORS)[C]['text'] ? C : never }[ErrorCode];
/** Compiles only while WideTexts is empty. */
const everyTextLiteral: [WideTexts] extends [never] ? true : false = true;

/** Calls the table refuses; `npm run typecheck` fails if one of them compiles. Never run. */
export function refusedCalls(): unknown[] {
  return [
    // @ts-expect-error a value is missing
    serviceError('INVALID_BRANCH', {}),
    // @ts-expect-error a quoted value is a string
    serviceError('INVALID_BRANCH', { branch: 3 }),
    // @ts-expect-error a list of parameter names, not one name
    serviceError('INVALID_QUERY', { parameters: 'name' }),
    // @ts-expect-error a placeholder the text does not have
    serviceError('NOT_FOUND', { other: 1 }),
    // @ts-expect-error BUSY needs its Retry-After from the thrower
    serviceError('BUSY', { running: 3 }),
    // @ts-expect-error STORE_UNAVAILABLE's Retry-After is the table's
    serviceError('STORE_UNAVAILABLE', {}, { retryAfterSeconds: 3 }),
    // @ts-expect-error a body field comes from the table only
    serviceError('INTERNAL', {}, { body: { secret: 'x' } }),
  ];
}

test('the table types the values: a readonly record of the placeholders, left out where there are none', (t) => {
  const bounds = { min: 1, max: 60 } as const;
  t.is(
    serviceError('INVALID_WAIT', bounds).message,
    'invalid query parameter wait: a whole number of seconds from 1 to 60',
  );
  t.is(serviceError('INTERNAL', {}, { cause: 'x' }).message, 'internal error');
  t.is(serviceError('CREDENTIALS_IN_URL').code, 'CREDENTIALS_IN_URL');
  t.true(everyTextLiteral);
});
