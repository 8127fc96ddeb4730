/** docs/errors.md, generated from the error table (src/errors/errors.ts). Pure. */
import { ERRORS, TRANSPORT_REASONS } from './errors.js';

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** A text template as the docs show it: each `{name}` becomes `<name>`. */
const shownText = (text: string): string => text.replace(/\{([A-Za-z]+)\}/g, '<$1>');

export function renderErrorsDoc(): string {
  const rows = Object.entries(ERRORS).map(
    ([code, e]) => `| \`${code}\` | ${e.status} | ${cell(`\`${shownText(e.text)}\``)} | ${cell(e.when)} |`,
  );
  return [
    '# Errors',
    '',
    '<!-- Generated from src/errors/errors.ts by `npm run docs:errors`; do not edit by hand. -->',
    '',
    'Every error answer is JSON: `{"error": "<text>"}`, plus `logId` where noted (fetch that log with',
    '`GET /logs/{logId}`), plus `availablePlatforms` for `PLATFORM_NOT_FOUND`. `<name>` stands for a',
    'value of the request or of the failure. The code is the stable name of the error in the service',
    '(logs, error tracking, this table); it is not part of the body. The API reference is',
    '[openapi.yaml](openapi.yaml).',
    '',
    '| Code | Status | Text | When |',
    '|---|---|---|---|',
    ...rows,
    '',
    '## Transport reasons',
    '',
    'The `<reason>` of `REGISTRY_UNREACHABLE` and `TOKEN_REALM_UNREACHABLE`: why no usable HTTP answer came.',
    '',
    '| Reason | Text | When |',
    '|---|---|---|',
    ...Object.entries(TRANSPORT_REASONS).map(
      ([reason, r]) => `| \`${reason}\` | ${cell(`\`${shownText(r.text)}\``)} | ${cell(r.when)} |`,
    ),
    '',
  ].join('\n');
}
