import { Counter, register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { counter, createMetricsRegistry, gauge, histogram } from '../../../src/observability/metrics.js';

describe('metrics helpers', () => {
  it('registers on the given registry, never on the global one', async () => {
    const registry = createMetricsRegistry();
    counter(registry, { name: 'demo_total', help: 'demo' }).inc();
    expect(await registry.metrics()).toContain('demo_total 1');
    expect(globalRegistry.getSingleMetric('demo_total')).toBeUndefined();
  });

  it('returns the existing metric when asked twice for one name', () => {
    const registry = createMetricsRegistry();
    const first = counter(registry, { name: 'twice_total', help: 'twice', labelNames: ['kind'] });
    expect(counter(registry, { name: 'twice_total', help: 'twice', labelNames: ['kind'] })).toBe(first);
    expect(first).toBeInstanceOf(Counter);
  });

  it('refuses a name that is registered as another metric type', () => {
    const registry = createMetricsRegistry();
    gauge(registry, { name: 'clash', help: 'clash' });
    expect(() => histogram(registry, { name: 'clash', help: 'clash' })).toThrow(/another type/);
  });

  it('adds process metrics only when asked to', async () => {
    expect(await createMetricsRegistry().metrics()).not.toContain('process_cpu');
    expect(await createMetricsRegistry({ processMetrics: true }).metrics()).toContain(
      'process_cpu_user_seconds_total',
    );
  });

  it('keeps independent registries apart', async () => {
    const acl = createMetricsRegistry();
    const decision = createMetricsRegistry();
    counter(acl, { name: 'shared_total', help: 'same name in two services' }).inc(3);
    counter(decision, { name: 'shared_total', help: 'same name in two services' }).inc(5);
    expect(await acl.metrics()).toContain('shared_total 3');
    expect(await decision.metrics()).toContain('shared_total 5');
  });
});
