import type { Registry as MetricsRegistry } from 'prom-client';
import { counterOn, gaugeOn, histogramOn } from './metric-registry.js';

export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after';

const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** controller-runtime's controller_runtime_* metrics for one controller. */
export class ControllerMetrics {
  private readonly labels: { controller: string };
  private readonly total;
  private readonly errors;
  private readonly terminalErrors;
  private readonly time;
  private readonly maxConcurrent;
  private readonly active;

  constructor(registry: MetricsRegistry, controller: string) {
    this.labels = { controller };
    this.total = counterOn(registry, {
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
    });
    this.errors = counterOn(registry, {
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
    });
    this.terminalErrors = counterOn(registry, {
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
    });
    this.time = histogramOn(registry, {
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_TIME_BUCKETS,
    });
    this.maxConcurrent = gaugeOn(registry, {
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
    });
    this.active = gaugeOn(registry, {
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
    });
    for (const result of ['success', 'error', 'requeue', 'requeue_after'] as const) {
      this.total.inc({ ...this.labels, result }, 0);
    }
    this.errors.inc(this.labels, 0);
    this.terminalErrors.inc(this.labels, 0);
    this.active.set(this.labels, 0);
  }

  setMaxConcurrentReconciles(workers: number): void {
    this.maxConcurrent.set(this.labels, workers);
  }

  /** Call when a reconcile starts; the returned function records its end. */
  startReconcile(): (outcome: ReconcileOutcome, terminal?: boolean) => void {
    this.active.inc(this.labels);
    const endTimer = this.time.startTimer(this.labels);
    return (outcome, terminal = false) => {
      endTimer();
      this.active.dec(this.labels);
      this.total.inc({ ...this.labels, result: outcome });
      if (outcome === 'error') {
        this.errors.inc(this.labels);
        if (terminal) {
          this.terminalErrors.inc(this.labels);
        }
      }
    };
  }
}
