/**
 * V8 heap tuning for a long-running, mostly idle service, applied by the entry (main.ts) before the
 * application is loaded. V8 grows the young generation (semi-spaces, 1 MiB at start) while module
 * loading allocates, up to 16 MiB, and keeps it: about 15 MiB of resident memory an idle service
 * does not need. With growth off, the young generation stays at its initial size; allocation bursts
 * then cost more frequent, cheap scavenges. V8 reads this flag at each growth decision, so setting
 * it at run time takes effect (`--max-semi-space-size` would not: it is read when the heap is set up).
 */
import { setFlagsFromString } from 'node:v8';

export function tuneHeap(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}
