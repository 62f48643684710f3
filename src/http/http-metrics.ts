import type { RequestHandler } from 'express';
import type { Registry as MetricsRegistry } from 'prom-client';
import { counter, histogram } from '../observability/metrics.js';
import { routeLabel } from './route-template.js';

export const DEFAULT_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface HttpMetricsOptions {
  durationBuckets?: number[];
}

/**
 * `http_requests_total{method,route,status}`, `http_request_duration_seconds{method,route,status_class}` and
 * `http_request_errors_total{method,route,status_class}` (4xx and 5xx). `route` is the template, never the
 * raw path. Requests the client aborted before a response are not counted.
 */
export function httpMetrics(registry: MetricsRegistry, options: HttpMetricsOptions = {}): RequestHandler {
  const requests = counter(registry, {
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code.',
    labelNames: ['method', 'route', 'status'],
  });
  const errors = counter(registry, {
    name: 'http_request_errors_total',
    help: 'HTTP requests answered with a 4xx or 5xx status, by status class.',
    labelNames: ['method', 'route', 'status_class'],
  });
  const duration = histogram(registry, {
    name: 'http_request_duration_seconds',
    help: 'Time from request arrival to the end of the response.',
    labelNames: ['method', 'route', 'status_class'],
    buckets: options.durationBuckets ?? DEFAULT_DURATION_BUCKETS,
  });

  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const method = req.method;
      const route = routeLabel(req);
      const statusClass = `${Math.floor(res.statusCode / 100)}xx`;
      requests.inc({ method, route, status: String(res.statusCode) });
      duration.observe(
        { method, route, status_class: statusClass },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
      if (res.statusCode >= 400) errors.inc({ method, route, status_class: statusClass });
    });
    next();
  };
}
