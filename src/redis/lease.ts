/**
 * How long what a replica holds in Redis outlives its last renewal: a running build, a build
 * lease, the prebuild schedules' lock, a subscription's deliveries. A replica that stopped
 * answering loses them once this has run out, and another takes over.
 */
export const LEASE_MS = 15_000;
