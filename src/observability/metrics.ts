import { Counter, Gauge, Histogram, Registry as MetricsRegistry, collectDefaultMetrics } from 'prom-client';
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration, Metric } from 'prom-client';
import { buildInfo } from './build-info.js';

/**
 * The prefix of every metric of the application's own. The standard families keep their names so that their
 * dashboards work unchanged: controller-runtime's and client-go's (`controller_runtime_*`, `workqueue_*`,
 * `leader_election_master_status`, registered in src/runtime) and prom-client's process metrics
 * (`process_*`, `nodejs_*`).
 */
export const METRIC_PREFIX = 'policygrant_';

export interface MetricsRegistryOptions {
  /** Also export the process metrics (CPU, memory, event loop lag, GC). */
  processMetrics?: boolean;
}

/**
 * A registry of its own for one service (the global default registry is never used), holding
 * `policygrant_build_info{version,revision,node} 1` from the start.
 */
export function createMetricsRegistry(options: MetricsRegistryOptions = {}): MetricsRegistry {
  const registry = new MetricsRegistry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  gauge(registry, {
    name: 'build_info',
    help: 'Always 1: the version (package.json), the revision (commit of the image), the Node.js runtime.',
    labelNames: ['version', 'revision', 'node'],
  }).set(buildInfo(), 1);
  return registry;
}

type WithoutRegisters<T> = Omit<T, 'registers'>;

/**
 * Get-or-create helpers for the application's metrics: `name` comes without METRIC_PREFIX, which they add.
 * A component that is built twice against one registry (tests, a restarted controller) reuses the metric
 * instead of failing with "already registered".
 */
export function counter<L extends string>(
  registry: MetricsRegistry,
  config: WithoutRegisters<CounterConfiguration<L>>,
): Counter<L> {
  const name = METRIC_PREFIX + config.name;
  return existing(registry, name, Counter) ?? new Counter({ ...config, name, registers: [registry] });
}

export function gauge<L extends string>(
  registry: MetricsRegistry,
  config: WithoutRegisters<GaugeConfiguration<L>>,
): Gauge<L> {
  const name = METRIC_PREFIX + config.name;
  return existing(registry, name, Gauge) ?? new Gauge({ ...config, name, registers: [registry] });
}

export function histogram<L extends string>(
  registry: MetricsRegistry,
  config: WithoutRegisters<HistogramConfiguration<L>>,
): Histogram<L> {
  const name = METRIC_PREFIX + config.name;
  return existing(registry, name, Histogram) ?? new Histogram({ ...config, name, registers: [registry] });
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
