import type { Logger } from '../observability/logger.js';
import type { AuditStore } from './audit-store.js';

export const PRUNE_INTERVAL_MS = 3_600_000;

/** Prunes now and then every `intervalMs` (audit.prune() deletes only past the owner's retention). */
export function schedulePruning(
  store: AuditStore,
  logger: Logger,
  intervalMs = PRUNE_INTERVAL_MS,
): () => void {
  const prune = () =>
    store.prune().then(
      (deleted) => {
        if (deleted > 0) logger.info({ deleted }, 'audit records past their retention deleted');
      },
      (error: unknown) => logger.warn({ err: error }, 'audit pruning failed; retried at the next interval'),
    );
  void prune();
  const timer = setInterval(() => void prune(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
