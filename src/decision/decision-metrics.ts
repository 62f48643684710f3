import type { Registry as MetricsRegistry } from 'prom-client';
import { counter, histogram } from '../observability/metrics.js';

export type DecisionResult = 'allowed' | 'denied' | 'error';

/** Checks take about a millisecond; the deadline is seconds. */
const CHECK_DURATION_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export interface DecisionMetrics {
  /** One evaluated check: its outcome and how long it took (seconds), from SpiceDB or the decision cache. */
  decided(result: DecisionResult, seconds: number): void;
  /** SpiceDB failed a check; `code` is the gRPC status name. */
  backendError(code: string): void;
}

/**
 * `policygrant_decisions_total{result}`, `policygrant_decision_check_duration_seconds{result}` and
 * `policygrant_decision_spicedb_errors_total{grpc_code}` (`grpc_code` as go-grpc-prometheus names a gRPC
 * status; `code` is an HTTP status). Requests rejected before evaluation (400, 401) are not decisions; the
 * HTTP metrics count them.
 */
export function decisionMetrics(registry: MetricsRegistry): DecisionMetrics {
  const decisions = counter(registry, {
    name: 'decisions_total',
    help: 'Checks evaluated, by result: allowed, denied, or error (failed closed).',
    labelNames: ['result'],
  });
  const duration = histogram(registry, {
    name: 'decision_check_duration_seconds',
    help: 'Time to evaluate a check (against SpiceDB, or from the decision cache), by result.',
    labelNames: ['result'],
    buckets: CHECK_DURATION_BUCKETS,
  });
  const backendErrors = counter(registry, {
    name: 'decision_spicedb_errors_total',
    help: 'SpiceDB calls of the check path that failed, by gRPC status (NO_STATUS: never reached SpiceDB).',
    labelNames: ['grpc_code'],
  });
  // Present at zero from the start, so that rates and alerts work before the first error.
  for (const result of ['allowed', 'denied', 'error'] as const) decisions.inc({ result }, 0);
  return {
    decided(result, seconds) {
      decisions.inc({ result });
      duration.observe({ result }, seconds);
    },
    backendError(code) {
      backendErrors.inc({ grpc_code: code });
    },
  };
}
