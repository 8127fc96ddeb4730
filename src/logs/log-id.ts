/** A log's id, `<kind>-<uuid>`: made and recognised here for both stores (files and Redis). */
import { randomUUID } from 'node:crypto';
import { LOG_KINDS, type LogKind } from './types.js';

/** `git-` or `img-` followed by a lower-case UUID. */
const LOG_ID_PATTERN = new RegExp(
  `^(${LOG_KINDS.join('|')})-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`,
);

export const isLogId = (id: string): boolean => LOG_ID_PATTERN.test(id);

export const newLogId = (kind: LogKind): string => `${kind}-${randomUUID()}`;
