import type { Registry as MetricsRegistry } from 'prom-client';
import { gauge, histogram } from '../observability/metrics.js';

/** Up to the largest CHECK_BATCH_MAX. */
const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 100, 250, 500, 1000];

export interface CheckBatchMetrics {
  /** A SpiceDB call of the check path went out with this many checks. */
  sent(checks: number): void;
}

/** `policygrant_decision_check_batch_size` and `policygrant_decision_check_batch_waiting`. */
export function checkBatchMetrics(registry: MetricsRegistry, waiting: () => number): CheckBatchMetrics {
  const size = histogram(registry, {
    name: 'decision_check_batch_size',
    help:
      'Checks per SpiceDB call of the check path: 1 is a CheckPermission of its own, more a CheckBulkPermissions ' +
      '(checks at a caller’s consistency_token, and all checks with CHECK_BATCHING=false, are not counted).',
    buckets: BATCH_SIZE_BUCKETS,
  });
  gauge(registry, {
    name: 'decision_check_batch_waiting',
    help: 'Checks waiting for a free SpiceDB call (CHECK_BATCH_CONCURRENCY calls are in flight).',
    collect() {
      this.set(waiting());
    },
  });
  return { sent: (checks) => size.observe(checks) };
}
