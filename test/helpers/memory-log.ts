/** A command log kept in memory, for unit tests that read what a step wrote (`text()`). */
import type { CommandLogWriter } from '../../src/logs/types.js';

export function memoryLog(id = 'img-00000000-0000-0000-0000-000000000000'): CommandLogWriter & {
  text: () => string;
} {
  let text = '';
  return {
    id,
    write: (chunk) => {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    },
    addSecrets: () => undefined,
    close: async () => undefined,
    text: () => text,
  };
}
