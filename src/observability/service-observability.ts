import type { Registry as MetricsRegistry } from 'prom-client';
import { createLogger, type Logger } from './logger.js';
import { createMetricsRegistry } from './metrics.js';

/** Where a service reports: a caller may bring its own (tests, benchmarks, the all-in-one dev stack). */
export interface ObservabilityParts {
  /** Default: a pino logger at the configured level, named for the service. */
  logger?: Logger;
  /** Default: a registry of the service's own (never prom-client's global one), with the process metrics. */
  metricsRegistry?: MetricsRegistry;
}

/** The logger and the registry a service starts with: the caller's, or new ones. */
export function serviceObservability(
  parts: ObservabilityParts,
  service: { name: string; logLevel: string },
): Required<ObservabilityParts> {
  return {
    logger: parts.logger ?? createLogger({ level: service.logLevel, name: service.name }),
    metricsRegistry: parts.metricsRegistry ?? createMetricsRegistry({ processMetrics: true }),
  };
}
