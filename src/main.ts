#!/usr/bin/env node
/**
 * The process entry (the package's bin). It tunes the V8 heap (heap-tuning.ts) before anything
 * else is loaded, since loading the application's modules is what grows the heap, then loads and
 * runs the service (service.ts).
 */
import { tuneHeap } from './observability/heap-tuning.js';

tuneHeap();
await import('./service.js');
