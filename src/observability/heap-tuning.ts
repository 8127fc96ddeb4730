/**
 * V8 heap tuning for a long-running, mostly idle service, applied by the first import of main.ts
 * (before the rest of the application is loaded). V8 grows the young generation (semi-spaces,
 * 1 MiB at start) up to 16 MiB while module loading allocates, and keeps it: about 15 MiB of
 * resident memory that an idle service does not need. With growth off, the young generation stays
 * at its initial size; allocation bursts then cost more frequent (cheap) scavenges. The flag is
 * read at each growth decision, so setting it at run time takes effect.
 */
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--semi-space-growth-factor=1');
