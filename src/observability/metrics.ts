import { Counter, Gauge, Histogram, Registry as MetricsRegistry, collectDefaultMetrics } from 'prom-client';
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration, Metric } from 'prom-client';

export interface MetricsRegistryOptions {
  /** Also export the process metrics (CPU, memory, event loop lag, GC). */
  processMetrics?: boolean;
}

/** A registry of its own for one service: the global default registry is never used. */
export function createMetricsRegistry(options: MetricsRegistryOptions = {}): MetricsRegistry {
  const registry = new MetricsRegistry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  return registry;
}

type WithoutRegisters<T> = Omit<T, 'registers'>;

/**
 * Get-or-create helpers: a component that is built twice against one registry (tests, a restarted
 * controller) reuses the metric instead of failing with "already registered".
 */
export function counter<L extends string>(
  registry: MetricsRegistry,
  config: WithoutRegisters<CounterConfiguration<L>>,
): Counter<L> {
  return existing(registry, config.name, Counter) ?? new Counter({ ...config, registers: [registry] });
}

export function gauge<L extends string>(
  registry: MetricsRegistry,
  config: WithoutRegisters<GaugeConfiguration<L>>,
): Gauge<L> {
  return existing(registry, config.name, Gauge) ?? new Gauge({ ...config, registers: [registry] });
}

export function histogram<L extends string>(
  registry: MetricsRegistry,
  config: WithoutRegisters<HistogramConfiguration<L>>,
): Histogram<L> {
  return existing(registry, config.name, Histogram) ?? new Histogram({ ...config, registers: [registry] });
}

function existing<M extends Metric>(
  registry: MetricsRegistry,
  name: string,
  kind: abstract new (...args: never[]) => M,
): M | undefined {
  const metric = registry.getSingleMetric(name);
  if (metric === undefined) return undefined;
  if (!(metric instanceof kind)) throw new Error(`metric ${name} is already registered as another type`);
  return metric;
}
