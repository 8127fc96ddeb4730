/**
 * The retention schedule: every `intervalMinutes` a dry run (the plan logged) or a run (delete
 * mode); nothing when the mode is off. The service's periodic runner (src/schedules.ts) runs it on
 * the holder of the schedule lock, first one interval after taking it; a run also takes the
 * store's lock (one at a time with POST /retention/run). A failed run is logged, the next comes at
 * its time.
 */
import type { RetentionSettings } from '../config/types.js';
import type { ScheduledPass } from '../prebuilds/schedule-lock.js';
import type { Retention } from './retention.js';

export function retentionPasses(
  retention: Pick<Retention, 'run' | 'dryRun'>,
  settings: RetentionSettings,
): ScheduledPass[] {
  if (settings.mode === 'off') return [];
  const run = async (): Promise<void> => {
    if (settings.mode === 'delete') await retention.run();
    else await retention.dryRun();
  };
  return [
    {
      name: 'retention',
      lane: 'retention',
      atOnce: false,
      intervalMs: settings.intervalMinutes * 60_000,
      run,
    },
  ];
}
