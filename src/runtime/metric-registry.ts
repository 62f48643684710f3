import { Counter, Gauge, Histogram } from 'prom-client';
import type {
  CounterConfiguration,
  GaugeConfiguration,
  HistogramConfiguration,
  Registry as MetricsRegistry,
} from 'prom-client';

// Every work queue, controller and elector on one MetricsRegistry shares one metric per name (told apart by
// labels), as controller-runtime's global metrics do; registering a name twice would throw.

export function counterOn<T extends string>(
  registry: MetricsRegistry,
  config: Omit<CounterConfiguration<T>, 'registers'>,
): Counter<T> {
  return (
    (registry.getSingleMetric(config.name) as Counter<T> | undefined) ??
    new Counter({ ...config, registers: [registry] })
  );
}

export function gaugeOn<T extends string>(
  registry: MetricsRegistry,
  config: Omit<GaugeConfiguration<T>, 'registers'>,
): Gauge<T> {
  return (
    (registry.getSingleMetric(config.name) as Gauge<T> | undefined) ??
    new Gauge({ ...config, registers: [registry] })
  );
}

export function histogramOn<T extends string>(
  registry: MetricsRegistry,
  config: Omit<HistogramConfiguration<T>, 'registers'>,
): Histogram<T> {
  return (
    (registry.getSingleMetric(config.name) as Histogram<T> | undefined) ??
    new Histogram({ ...config, registers: [registry] })
  );
}
