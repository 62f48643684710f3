import { LRUCache, type Perf } from 'lru-cache';
import type { Registry as MetricsRegistry } from 'prom-client';
import type { RateLimit } from '../../http/rate-limit/request-limits.js';
import type { Logger } from '../../observability/logger.js';
import { counter } from '../../observability/metrics.js';
import { actorOf, type Auditor } from './mutation-auditor.js';

/**
 * Bound on the actors whose refusals are counted at once. A flood of identities evicts the least recently
 * refused first; an evicted actor starts again from zero, which costs the trail at most `limit` more records.
 */
const COUNTED_ACTORS = 10_000;

export interface RefusalLimitOptions {
  /** Refusals recorded per actor and window, the window starting at the actor's first refusal. */
  limit: RateLimit;
  metricsRegistry: MetricsRegistry;
  logger: Logger;
  /** The clock of the windows (tests). */
  perf?: Perf;
}

/**
 * `auditor`, with refusals (403) recorded at most `limit.requests` times per actor and window: a caller who
 * floods refused requests (6,000 in seconds) would otherwise write as many records, each a row and a link of
 * the chain. The excess is counted, by action, in `policygrant_audit_refusals_unrecorded_total`, and the first
 * refusal past the limit in a window is logged with its actor. Everything else is recorded as `auditor` does.
 */
export function limitRefusals(auditor: Auditor, options: RefusalLimitOptions): Auditor {
  const { limit, metricsRegistry, logger } = options;
  const unrecorded = counter(metricsRegistry, {
    name: 'audit_refusals_unrecorded_total',
    help: 'Refused requests (403) not recorded because their actor was past its limit of recorded refusals.',
    labelNames: ['action'],
  });
  const refusals = new LRUCache<string, number>({
    max: COUNTED_ACTORS,
    ttl: limit.windowMs,
    noUpdateTTL: true,
    // Every check reads the clock (no cached time): a refusal is cheap next to the record it may write.
    ttlResolution: 0,
    ...(options.perf ? { perf: options.perf } : {}),
  });
  return {
    ensureAvailable: () => auditor.ensureAvailable(),
    record(principal, requestId, outcome, actions, changed) {
      if (changed || outcome.status !== 403) {
        return auditor.record(principal, requestId, outcome, actions, changed);
      }
      const actor = actorOf(principal);
      const key = `${actor.type}:${actor.id}`;
      const count = (refusals.get(key) ?? 0) + 1;
      refusals.set(key, count);
      if (count <= limit.requests) return auditor.record(principal, requestId, outcome, actions, changed);
      if (count === limit.requests + 1) {
        logger.warn(
          { actor, limit },
          'refusals past the limit: the rest of this window is counted (audit_refusals_unrecorded_total), not recorded',
        );
      }
      for (const action of actions) unrecorded.inc({ action: action.action });
      return Promise.resolve();
    },
  };
}
