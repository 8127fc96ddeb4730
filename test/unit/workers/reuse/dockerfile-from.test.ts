import test from 'ava';
import { dockerfileImages } from '../../../../workers/reuse/dockerfile-from.js';

test('plain FROM references are listed; stage names, scratch and --platform flags are not', (t) => {
  const text = [
    '# a comment',
    'ARG V=1',
    'FROM --platform=$BUILDPLATFORM localhost:5000/dev/base:1 AS build',
    'RUN echo hi \\',
    '  && echo there',
    'from build as second',
    'FROM scratch',
    'COPY --from=build /a /b',
    'COPY --from=localhost:5000/dev/tools:2 /t /t',
    'COPY --from=0 /x /y',
    'FROM localhost:5000/dev/base:1',
  ].join('\n');
  t.deepEqual(dockerfileImages(text), {
    kind: 'images',
    refs: ['localhost:5000/dev/base:1', 'localhost:5000/dev/tools:2'],
  });
});

test('build arguments, remote ADD and other escape characters make it unkeyable, with the reason', (t) => {
  const cases: Array<[string, RegExp]> = [
    ['ARG B=x\nFROM ${B}', /FROM: "\$\{B\}" uses a build argument/],
    ['FROM a:1\nCOPY --from=$X /a /b', /COPY --from: "\$X" uses a build argument/],
    ['FROM a:1\nADD https://example.com/x.tgz /x', /ADD of remote content "https:\/\/example.com\/x.tgz"/],
    ['FROM a:1\nADD git@github.com:o/r.git /r', /ADD of remote content/],
    ['# escape=`\nFROM a:1', /escape directive "`"/],
    ['FROM', /FROM without an image/],
  ];
  for (const [text, reason] of cases) {
    const out = dockerfileImages(text);
    t.is(out.kind, 'unkeyable', text);
    if (out.kind === 'unkeyable') t.regex(out.reason, reason);
  }
});

test('ADD of local files keeps the Dockerfile keyable', (t) => {
  t.deepEqual(dockerfileImages('FROM a:1\nADD ./x.tar /\nADD --chown=1:1 y z /w/'), {
    kind: 'images',
    refs: ['a:1'],
  });
});
