// scrubEvent (pure): what is removed from an error-tracking event before it is sent.
import test from 'ava';
import { MASK as REDACTED, secretVariants } from '../../../../src/secrets/masking.js';
import { scrubEvent, scrubString } from '../../../../src/secrets/scrub-event.js';

const variants = secretVariants(['configured-git-token-1234', 'c2VjcmV0LWF1dGg=']);

const strings: [string, string, string][] = [
  ['URL userinfo', 'clone https://user:pw@git.example/r.git', `clone https://${REDACTED}@git.example/r.git`],
  ['ssh userinfo without password', 'ssh://git@host:22/r.git', `ssh://${REDACTED}@host:22/r.git`],
  ['bearer value', 'Authorization: Bearer abc.def-ghi', `Authorization: Bearer ${REDACTED}`],
  ['basic value', 'header Basic dXNlcjpwYXNz', `header Basic ${REDACTED}`],
  ['configured secret', 'token configured-git-token-1234 used', 'token *** used'],
  ['plain text untouched', 'git exited with code 128', 'git exited with code 128'],
];
for (const [title, input, expected] of strings) {
  test(`scrubString: ${title}`, (t) => t.is(scrubString(input, variants), expected));
}

test('secret-looking keys are redacted at any depth, headers included', (t) => {
  const event = scrubEvent(
    {
      tags: { route: '/build', password: 'p' },
      extra: { nested: [{ token: 't', privateKey: 'k', keep: 'v' }] },
      request: {
        headers: {
          'X-Registry-Password': 'p',
          Authorization: 'Basic x',
          'x-registry-username': 'u',
          Accept: '*/*',
        },
        data: '{"gitCredentials":{"token":"t"}}',
        cookies: { a: 'b' },
        query_string: 'a=b',
        url: 'http://svc/build',
      },
      breadcrumbs: [{ message: 'x' }],
    },
    variants,
  );
  t.deepEqual(event, {
    tags: { route: '/build', password: REDACTED },
    extra: { nested: [{ token: REDACTED, privateKey: REDACTED, keep: 'v' }] },
    request: {
      headers: {
        'X-Registry-Password': REDACTED,
        Authorization: REDACTED,
        'x-registry-username': 'u',
        Accept: '*/*',
      },
      url: 'http://svc/build',
    },
  });
});

test('the original event is left untouched', (t) => {
  const original = { tags: { token: 't' } };
  scrubEvent(original, variants);
  t.deepEqual(original, { tags: { token: 't' } });
});
