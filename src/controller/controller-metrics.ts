import type { Registry as MetricsRegistry } from 'prom-client';
import {
  derivedState,
  ENFORCED_CONDITION,
  EnforcedReason,
  findStatusCondition,
  type Membership,
  type PolicyGrant,
} from '../api/v1alpha1/index.js';
import { counter, gauge, histogram } from '../observability/metrics.js';
import { isDeadLetter } from './projected/projected-status.js';

export type EnforcementTransition = 'enforced' | 'revoked' | 'expired';
export type DriftDirection = 'missing' | 'orphan';

const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600];
const RESYNC_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600];

/**
 * The status does not yet say what the controller will make of the grant's current spec and state: never
 * reconciled, spec changed since, or revoked or expired since. The spec's "outbox backlog".
 */
export function awaitsEnforcement(grant: PolicyGrant, now: Date): boolean {
  const generation = grant.metadata.generation ?? 0;
  const condition = findStatusCondition(grant.status?.conditions ?? [], ENFORCED_CONDITION);
  return (
    condition === undefined ||
    condition.observedGeneration !== generation ||
    grant.status?.observedGeneration !== generation ||
    grant.status.state !== derivedState(grant, now)
  );
}

export function failsProjection(grant: PolicyGrant): boolean {
  const condition = findStatusCondition(grant.status?.conditions ?? [], ENFORCED_CONDITION);
  return condition?.reason === EnforcedReason.ProjectionFailed;
}

/** The controller's domain metrics, beyond the runtime's controller_runtime_* and workqueue_* ones. */
export class GrantMetrics {
  private readonly latency;
  private readonly drift;
  private readonly resyncDuration;
  private readonly resyncFailures;

  constructor(registry: MetricsRegistry, grants: () => PolicyGrant[]) {
    this.latency = histogram(registry, {
      name: 'enforcement_latency_seconds',
      help:
        'Time from a grant change to the matching Enforced transition: creation to Projected (enforced), ' +
        'revokedAt to Revoked (revoked), expiryTime to Expired (expired).',
      labelNames: ['transition'],
      buckets: LATENCY_BUCKETS,
    });
    gauge(registry, {
      name: 'unenforced_grants',
      help:
        'Grants whose status does not yet reflect their current spec and state (the outbox backlog): ' +
        'committed, not yet enforced or withdrawn.',
      collect() {
        const now = new Date();
        this.set(grants().filter((grant) => awaitsEnforcement(grant, now)).length);
      },
    });
    gauge(registry, {
      name: 'projection_failed_grants',
      help: 'Grants whose Enforced condition is ProjectionFailed, retried with backoff (the dead-letter depth).',
      collect() {
        this.set(grants().filter(failsProjection).length);
      },
    });
    this.drift = counter(registry, {
      name: 'drift_repaired_total',
      help:
        'Relationships the resync repaired: missing ones written (or rewritten with the right expiration), ' +
        'orphans (accounted for by no grant or CatalogItem) deleted.',
      labelNames: ['direction'],
    });
    this.drift.inc({ direction: 'missing' }, 0);
    this.drift.inc({ direction: 'orphan' }, 0);
    this.resyncDuration = histogram(registry, {
      name: 'resync_duration_seconds',
      help: 'Duration of complete resyncs of SpiceDB against the custom resources.',
      buckets: RESYNC_BUCKETS,
    });
    this.resyncFailures = counter(registry, {
      name: 'resync_failures_total',
      help: 'Resyncs that failed (and are retried at the next period).',
    });
  }

  /** `since` as the API serves times: RFC 3339 strings (typed Date by client-node's models). */
  observeLatency(transition: EnforcementTransition, since: string | Date | undefined, now: Date): void {
    const started = since instanceof Date ? since.getTime() : Date.parse(since ?? '');
    if (Number.isFinite(started))
      this.latency.observe({ transition }, Math.max(0, now.getTime() - started) / 1000);
  }

  driftRepaired(direction: DriftDirection, count: number): void {
    if (count > 0) this.drift.inc({ direction }, count);
  }

  resyncCompleted(seconds: number): void {
    this.resyncDuration.observe(seconds);
  }

  resyncFailed(): void {
    this.resyncFailures.inc();
  }
}

/**
 * How many reconciles' SpiceDB writes shared each WriteRelationships (WriteBatcher); returns the observer.
 */
export function registerWriteBatchMetrics(registry: MetricsRegistry): (writes: number) => void {
  const writesPerCall = histogram(registry, {
    name: 'spicedb_writes_per_call',
    help: 'SpiceDB writes of reconciles (and resyncs) carried by one WriteRelationships call: the batch size.',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
  });
  return (writes) => writesPerCall.observe(writes);
}

/** The Membership controller's dead-letter depth, computed from the cache at each scrape. */
export function registerMembershipMetrics(registry: MetricsRegistry, memberships: () => Membership[]): void {
  gauge(registry, {
    name: 'membership_dead_letter',
    help:
      'Memberships whose Enforced condition is ProjectionFailed: their projection keeps failing and is retried ' +
      'with backoff (the dead-letter depth).',
    collect() {
      this.set(memberships().filter(isDeadLetter).length);
    },
  });
}
