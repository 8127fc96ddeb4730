/**
 * GET /usage as a client reads it (docs/usage.md): the JSON report, the CSV read back with a small
 * RFC 4180 parser (quoted fields, doubled quotes, CRLF), and the sums a test compares.
 */
import type { UsageReport, UsageRow } from '../../src/usage/report.js';

/** The records of RFC 4180 text: fields split at commas outside quotes, records at CRLF (or LF). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i += 1;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || record.length > 0) records.push([...record, field]);
  return records;
}

/** The CSV's records as objects by the header's names. */
export function csvObjects(text: string): Record<string, string>[] {
  const [header = [], ...rows] = parseCsv(text);
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
}

export async function getUsage(
  url: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: UsageReport & Record<string, unknown> }> {
  const res = await fetch(`${url}/usage${query}`, { headers });
  return { status: res.status, body: (await res.json()) as UsageReport & Record<string, unknown> };
}

export async function getUsageCsv(
  url: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(`${url}/usage${query}`, { headers: { ...headers, accept: 'text/csv' } });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The row of `tenant` in a `by=tenant` report. */
export const rowOf = (report: UsageReport, tenant: string): UsageRow | undefined =>
  report.rows.find((row) => row.tenant === tenant);
