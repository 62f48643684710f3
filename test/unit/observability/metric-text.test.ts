import { describe, expect, it } from 'vitest';
import { counter, createMetricsRegistry } from '../../../src/observability/metrics.js';
import { metricSum, metricValue } from '../../../src/observability/metric-text.js';

async function scrape(): Promise<string> {
  const registry = createMetricsRegistry();
  const errors = counter(registry, {
    name: 'demo_errors_total',
    help: 'demo',
    labelNames: ['route', 'code_class'],
  });
  errors.inc({ route: '/a', code_class: '5xx' }, 2);
  errors.inc({ route: '/b', code_class: '5xx' }, 3);
  errors.inc({ route: '/a', code_class: '4xx' }, 7);
  counter(registry, { name: 'demo_errors_total_other', help: 'demo' }).inc(11);
  return registry.metrics();
}

describe('reading a Prometheus scrape', () => {
  it('reads one series, and 0 for a series that is absent', async () => {
    const text = await scrape();
    expect(metricValue(text, 'policygrant_demo_errors_total{route="/a",code_class="4xx"}')).toBe(7);
    expect(metricValue(text, 'policygrant_demo_errors_total_other')).toBe(11);
    expect(metricValue(text, 'absent_total')).toBe(0);
  });

  it("sums a metric's series that carry a label, and no other metric's", async () => {
    const text = await scrape();
    expect(metricSum(text, 'policygrant_demo_errors_total', 'code_class="5xx"')).toBe(5);
    expect(metricSum(text, 'policygrant_demo_errors_total', 'code_class="4xx"')).toBe(7);
    expect(metricSum(text, 'absent_total', 'code_class="5xx"')).toBe(0);
  });
});
