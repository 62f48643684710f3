import type { RequestHandler } from 'express';
import type { Registry as MetricsRegistry } from 'prom-client';
import { counter, histogram } from '../observability/metrics.js';
import { routeLabel } from './route-template.js';

export const DEFAULT_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface HttpMetricsOptions {
  durationBuckets?: number[];
}

/**
 * `policygrant_http_requests_total{method,route,code}`,
 * `policygrant_http_request_duration_seconds{method,route,code_class}` and
 * `policygrant_http_request_errors_total{method,route,code_class}` (4xx and 5xx). `code` is the status code,
 * as promhttp names it; `code_class` its class (2xx, 4xx, 5xx), which keeps the histogram's series few.
 * `route` is the template, never the raw path. Requests the client aborted before a response are not counted.
 */
export function httpMetrics(registry: MetricsRegistry, options: HttpMetricsOptions = {}): RequestHandler {
  const requests = counter(registry, {
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code.',
    labelNames: ['method', 'route', 'code'],
  });
  const errors = counter(registry, {
    name: 'http_request_errors_total',
    help: 'HTTP requests answered with a 4xx or 5xx status, by status class.',
    labelNames: ['method', 'route', 'code_class'],
  });
  const duration = histogram(registry, {
    name: 'http_request_duration_seconds',
    help: 'Time from request arrival to the end of the response.',
    labelNames: ['method', 'route', 'code_class'],
    buckets: options.durationBuckets ?? DEFAULT_DURATION_BUCKETS,
  });

  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const method = req.method;
      const route = routeLabel(req);
      const codeClass = `${Math.floor(res.statusCode / 100)}xx`;
      requests.inc({ method, route, code: String(res.statusCode) });
      duration.observe(
        { method, route, code_class: codeClass },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
      if (res.statusCode >= 400) errors.inc({ method, route, code_class: codeClass });
    });
    next();
  };
}
