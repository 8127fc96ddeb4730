/**
 * The retention schedule: every `intervalMinutes` a dry run (the plan logged) or a run (delete
 * mode); nothing when the mode is off. At most one replica runs at a time (the store's lock); a
 * failed run is logged and the next one comes at its time.
 */
import type { RetentionSettings } from '../config/types.js';
import type { Logger } from '../observability/logger.js';
import type { Retention } from './retention.js';

export function startRetentionSchedule(
  retention: Pick<Retention, 'run' | 'dryRun'>,
  settings: RetentionSettings,
  logger: Logger,
  signal: AbortSignal,
): void {
  if (settings.mode === 'off') return;
  let running = false;
  const tick = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      if (settings.mode === 'delete') await retention.run();
      else await retention.dryRun();
    } catch (err) {
      logger.warn({ err }, 'retention: scheduled run failed');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), settings.intervalMinutes * 60_000);
  timer.unref();
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
