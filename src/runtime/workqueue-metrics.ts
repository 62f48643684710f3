import { exponentialBuckets } from 'prom-client';
import type { Registry as MetricsRegistry } from 'prom-client';
import { counterOn, gaugeOn, histogramOn } from './metric-registry.js';
import { monotonicNow } from './timing.js';

/** What a work queue reports (client-go's queueMetrics). */
export interface QueueMetrics {
  add(key: string): void;
  get(key: string): void;
  done(key: string): void;
  retry(): void;
  /** The queue is shut down: zero its gauges of work in progress. */
  close(): void;
}

export const noQueueMetrics: QueueMetrics = {
  add: () => undefined,
  get: () => undefined,
  done: () => undefined,
  retry: () => undefined,
  close: () => undefined,
};

type Labels = { name: string; controller: string };

/** Queues whose work in progress the two gauges below compute when scraped, per MetricsRegistry. */
const liveQueues = new WeakMap<MetricsRegistry, Set<PrometheusQueueMetrics>>();

function liveQueuesOf(registry: MetricsRegistry): Set<PrometheusQueueMetrics> {
  const queues = liveQueues.get(registry) ?? new Set<PrometheusQueueMetrics>();
  liveQueues.set(registry, queues);
  return queues;
}

const secondsSince = (start: number, now: number): number => (now - start) / 1000;

/** controller-runtime's workqueue metrics, with `name` and `controller` both the queue's name. */
export class PrometheusQueueMetrics implements QueueMetrics {
  private readonly labels: Labels;
  private readonly addTimes = new Map<string, number>();
  private readonly processingStarts = new Map<string, number>();
  private readonly depth;
  private readonly adds;
  private readonly latency;
  private readonly workDuration;
  private readonly unfinished;
  private readonly longestRunning;
  private readonly retries;
  private readonly registry: MetricsRegistry;

  constructor(registry: MetricsRegistry, name: string) {
    this.registry = registry;
    this.labels = { name, controller: name };
    const labelNames = ['name', 'controller'] as const;
    const durationBuckets = exponentialBuckets(10e-9, 10, 12);
    this.depth = gaugeOn(registry, {
      name: 'workqueue_depth',
      help: 'Current depth of workqueue by workqueue and priority',
      labelNames: [...labelNames, 'priority'],
    });
    this.adds = counterOn(registry, {
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames,
    });
    this.latency = histogramOn(registry, {
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames,
      buckets: durationBuckets,
    });
    this.workDuration = histogramOn(registry, {
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames,
      buckets: durationBuckets,
    });
    const queues = liveQueuesOf(registry);
    this.unfinished = gaugeOn(registry, {
      name: 'workqueue_unfinished_work_seconds',
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate ' +
        'at which this increases.',
      labelNames,
      collect() {
        for (const queue of queues) {
          this.set(queue.labels, queue.unfinishedWorkSeconds());
        }
      },
    });
    this.longestRunning = gaugeOn(registry, {
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames,
      collect() {
        for (const queue of queues) {
          this.set(queue.labels, queue.longestRunningProcessorSeconds());
        }
      },
    });
    this.retries = counterOn(registry, {
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames,
    });
    queues.add(this);
    this.depth.set({ ...this.labels, priority: '' }, 0);
  }

  add(key: string): void {
    this.adds.inc(this.labels);
    this.depth.inc({ ...this.labels, priority: '' });
    if (!this.addTimes.has(key)) {
      this.addTimes.set(key, monotonicNow());
    }
  }

  get(key: string): void {
    const now = monotonicNow();
    this.depth.dec({ ...this.labels, priority: '' });
    this.processingStarts.set(key, now);
    const addedAt = this.addTimes.get(key);
    if (addedAt !== undefined) {
      this.latency.observe(this.labels, secondsSince(addedAt, now));
      this.addTimes.delete(key);
    }
  }

  done(key: string): void {
    const startedAt = this.processingStarts.get(key);
    if (startedAt !== undefined) {
      this.workDuration.observe(this.labels, secondsSince(startedAt, monotonicNow()));
      this.processingStarts.delete(key);
    }
  }

  retry(): void {
    this.retries.inc(this.labels);
  }

  close(): void {
    liveQueuesOf(this.registry).delete(this);
    this.unfinished.set(this.labels, 0);
    this.longestRunning.set(this.labels, 0);
  }

  unfinishedWorkSeconds(): number {
    const now = monotonicNow();
    let total = 0;
    for (const startedAt of this.processingStarts.values()) {
      total += secondsSince(startedAt, now);
    }
    return total;
  }

  longestRunningProcessorSeconds(): number {
    const now = monotonicNow();
    let longest = 0;
    for (const startedAt of this.processingStarts.values()) {
      longest = Math.max(longest, secondsSince(startedAt, now));
    }
    return longest;
  }
}
