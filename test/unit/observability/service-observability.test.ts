import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { serviceObservability } from '../../../src/observability/service-observability.js';

describe('serviceObservability', () => {
  it('keeps the logger and the registry the caller brings', () => {
    const logger = createLogger({ level: 'silent' });
    const metricsRegistry = createMetricsRegistry();
    const parts = serviceObservability({ logger, metricsRegistry }, { name: 'svc', logLevel: 'debug' });
    expect(parts.logger).toBe(logger);
    expect(parts.metricsRegistry).toBe(metricsRegistry);
  });

  it('builds a logger at the configured level and a registry of its own with the process metrics', async () => {
    const first = serviceObservability({}, { name: 'svc', logLevel: 'warn' });
    const second = serviceObservability({}, { name: 'svc', logLevel: 'warn' });
    expect(first.logger.level).toBe('warn');
    expect(first.metricsRegistry).not.toBe(second.metricsRegistry);
    expect(await first.metricsRegistry.metrics()).toContain('process_cpu_user_seconds_total');
  });
});
