import type { Counter, Registry as MetricsRegistry } from 'prom-client';
import { counter } from '../../observability/metrics.js';

/**
 * `policygrant_http_rate_limited_requests_total{service, class}`: requests answered 429 by a limit of this
 * service.
 */
export function rateLimitedRequests(registry: MetricsRegistry): Counter<'service' | 'class'> {
  return counter(registry, {
    name: 'http_rate_limited_requests_total',
    help: 'Requests answered 429 by a rate limit, by service and route class (failed-authentication: per address).',
    labelNames: ['service', 'class'],
  });
}
