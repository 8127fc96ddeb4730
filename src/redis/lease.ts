/**
 * How long what a replica holds in Redis outlives its last renewal (renewed every third of it):
 * a running build, a build lease, the prebuild schedules' lock. A replica that stopped answering
 * loses them once this has run out, and another takes over.
 */
export const LEASE_MS = 15_000;
