import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry as MetricsRegistry } from 'prom-client';
import type { Logger } from '../../observability/logger.js';
import { counter, histogram } from '../../observability/metrics.js';
import { MAX_CONFIRMATION_WAIT_MS, WATCH_PASSED_PATH } from '../../decision/revision-route.js';
import type { DecisionReplicas } from './decision-replicas.js';

/** Past its own wait, a replica that has not answered is taken as unreachable for this request. */
const REQUEST_GRACE_MS = 2_000;
/** Before asking again a replica that answered at once without passing (Watch not current) or failed. */
const RETRY_PAUSE_MS = 50;

export type ReplicaOutcome = 'passed' | 'not_passed' | 'unreachable';

/** How many Ready replicas there were, and how many confirmed. */
export interface ReplicaCount {
  ready: number;
  passed: number;
}

export interface ReplicaConfirmationsOptions {
  replicas: DecisionReplicas;
  logger: Logger;
  metricsRegistry: MetricsRegistry;
}

/**
 * Asks every Ready decision replica, in parallel, whether its revision barrier has passed a ZedToken, until each
 * says so or the deadline passes. What `Prefer: wait` rests on with several replicas: a change is reported
 * enforced only when every Ready replica confirmed it (docs/acl-grants.md, "Read your grant").
 */
export class ReplicaConfirmations {
  private readonly outcomes;
  private readonly duration;

  constructor(private readonly options: ReplicaConfirmationsOptions) {
    this.outcomes = counter(options.metricsRegistry, {
      name: 'acl_decision_replica_confirmations_total',
      help:
        'Decision replicas asked to confirm a ZedToken for Prefer: wait, by outcome: passed, not_passed (not ' +
        'within the wait), unreachable (its last answer was an error).',
      labelNames: ['outcome'],
    });
    for (const outcome of ['passed', 'not_passed', 'unreachable'] as const) this.outcomes.inc({ outcome }, 0);
    this.duration = histogram(options.metricsRegistry, {
      name: 'acl_decision_replica_confirmation_duration_seconds',
      help: 'From asking the Ready decision replicas about a ZedToken to the last one confirming (or the deadline).',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    });
  }

  start(): void {
    this.options.replicas.start();
  }

  stop(): Promise<void> {
    return this.options.replicas.stop();
  }

  /**
   * Every Ready replica asked until it confirms or `deadline` (performance.now()) passes. No Ready replica known
   * (the list not arrived, or empty) confirms nothing: `ready` 0 is never reported enforced.
   */
  async confirm(zedToken: string, deadline: number): Promise<ReplicaCount> {
    const started = performance.now();
    const urls = this.options.replicas.ready() ?? [];
    const outcomes = await Promise.all(urls.map((url) => this.untilPassed(url, zedToken, deadline)));
    this.duration.observe((performance.now() - started) / 1000);
    outcomes.forEach((outcome) => this.outcomes.inc({ outcome }));
    const unconfirmed = urls.filter((_url, index) => outcomes[index] !== 'passed');
    if (urls.length === 0 || unconfirmed.length > 0) {
      this.options.logger.warn(
        { zedToken, ready: urls.length, unconfirmed },
        'decision replicas did not confirm the change in time: reported not enforced',
      );
    }
    return { ready: urls.length, passed: urls.length - unconfirmed.length };
  }

  private async untilPassed(url: string, zedToken: string, deadline: number): Promise<ReplicaOutcome> {
    let outcome: ReplicaOutcome = 'not_passed';
    for (let left = deadline - performance.now(); left > 0; left = deadline - performance.now()) {
      const waitMs = Math.min(MAX_CONFIRMATION_WAIT_MS, Math.ceil(left));
      const asked = performance.now();
      outcome = await ask(url, zedToken, waitMs);
      if (outcome === 'passed') return outcome;
      // An answer before its wait ended (a Watch not current) or an error: do not spin on the replica.
      if (performance.now() - asked < waitMs) await sleep(RETRY_PAUSE_MS);
    }
    return outcome;
  }
}

async function ask(url: string, zedToken: string, waitMs: number): Promise<ReplicaOutcome> {
  const query = new URLSearchParams({ zed_token: zedToken, wait_ms: String(waitMs) });
  try {
    const response = await fetch(`${url}${WATCH_PASSED_PATH}?${query}`, {
      signal: AbortSignal.timeout(waitMs + REQUEST_GRACE_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return 'unreachable';
    }
    const body = (await response.json()) as { passed?: unknown };
    return body.passed === true ? 'passed' : 'not_passed';
  } catch {
    return 'unreachable';
  }
}
