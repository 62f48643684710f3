import {
  derivedState,
  ENFORCED_CONDITION,
  findStatusCondition,
  type PolicyGrant,
  type PolicyGrantStatus,
} from '../../api/v1alpha1/index.js';
import type { Logger } from '../../observability/logger.js';
import type { ReconcileResult } from '../../runtime/index.js';
import type { Relationship } from '../../spicedb/client.js';
import {
  grantKey,
  grantNamespaceBinding,
  GrantReason,
  type WithheldReason,
} from '../../verdict/grant-verdict.js';
import { candidateTupleKeys } from '../../verdict/projection.js';
import { objectOfTupleKey, type TupleKey } from '../../verdict/tuple-key.js';
import type { ClusterView } from '../cluster-view.js';
import type { GrantMetrics } from '../controller-metrics.js';
import type { EventRecorder, RecordedEvent } from '../event-recorder.js';
import { grantRelations } from '../managed-relations.js';
import type {
  Decision,
  TupleAccounting,
  FailedProjection,
  ProjectedKind,
  Recall,
} from '../projected/projected-kind.js';
import {
  nextGrantStatus,
  type EnforcedTransition,
  type GrantOutcome,
  type GrantStatusChange,
} from './grant-status.js';
import { projectedKeys, recordProjected } from './projected-tuples.js';

export interface GrantKindOptions {
  cluster: ClusterView;
  events: Pick<EventRecorder, 'record'>;
  metrics: GrantMetrics;
  logger: Logger;
}

/** Reconcile again a little after expiryTime, so that the grant is past it by then. */
const EXPIRY_MARGIN_MS = 100;

/** Reasons that are the normal end of a grant's life rather than a problem to look at. */
const NORMAL_WITHDRAWALS = new Set<string>([GrantReason.Revoked, GrantReason.Expired]);

/**
 * Whether SpiceDB may hold tuples of the grant that its status does not record (`projected` absent): it counts
 * relationships written without recording them (a failure keeps the count of the last success), or there is
 * no outcome at all (a leader died between the SpiceDB write and the status).
 */
function mayHaveUnrecordedTuples(grant: PolicyGrant): boolean {
  const { status } = grant;
  if (status?.projected) return false;
  const condition = findStatusCondition(status?.conditions ?? [], ENFORCED_CONDITION);
  return !condition || (status?.relationships ?? 0) > 0;
}

/**
 * Whether the grant's spec is the one it was created with (the API server counts spec changes in
 * `generation`; a deletion may count as one too: then the read is made). Whatever a leader that died before
 * writing the status may have written for such a grant follows from this spec alone: its projection, no read of
 * SpiceDB needed. That is the common case because the ACL API creates grants with the finalizer (docs/controller-design.md, "Finalizer from
 * birth"): every new grant has the finalizer and no status, and a repair read under the item's lock for each
 * one would cost more than the finalizer patch it saves.
 */
function neverEdited(grant: PolicyGrant): boolean {
  return (grant.metadata.generation ?? 1) === 1;
}

/**
 * PolicyGrants as a projected kind: the verdict (over the grant's CatalogItem, its namespace and the grants it
 * may conflict with) decides; a withdrawal removes every tuple the spec could give; the status records what was
 * written, so that a new leader removes an edit's old tuples at once (or reads the item's relations when nothing
 * says); an Event marks every transition of Enforced; the grant is reconciled again at expiryTime while active.
 */
export class GrantKind implements ProjectedKind<
  PolicyGrant,
  GrantOutcome,
  PolicyGrantStatus,
  WithheldReason
> {
  readonly name = 'policygrant';
  readonly relations;

  constructor(private readonly options: GrantKindOptions) {
    this.relations = grantRelations(options.cluster.registry);
  }

  object(key: string): PolicyGrant | undefined {
    return this.options.cluster.grant(key);
  }

  all(): PolicyGrant[] {
    return this.options.cluster.allGrants();
  }

  keysProjecting(key: TupleKey): string[] {
    return this.options.cluster.grantsWithTupleKey(key).map(grantKey);
  }

  *wanted(now: Date): Iterable<Relationship[]> {
    const { cluster } = this.options;
    for (const grant of cluster.allGrants()) {
      // One evaluator per grant: remembering every verdict of a pass would hold all relationships at once.
      const verdict = cluster.evaluator(now).evaluate(grant);
      if (verdict.enforce) yield verdict.relationships;
    }
  }

  accounting(now: Date): TupleAccounting {
    return this.options.cluster.accounting(now);
  }

  decide(grant: PolicyGrant, now: Date): Decision<WithheldReason> {
    const verdict = this.options.cluster.evaluator(now).evaluate(grant);
    return verdict.enforce
      ? { relationships: verdict.relationships }
      : { withdrawal: { reason: verdict.reason, message: verdict.message } };
  }

  candidates(grant: PolicyGrant): TupleKey[] {
    return candidateTupleKeys(grant.spec, this.options.cluster.registry);
  }

  /** Every grant: one withheld now (say, before its CatalogItem exists) may be enforced later. */
  wantsFinalizer(): boolean {
    return true;
  }

  outcome(decision: Decision<WithheldReason>, zedToken: string | undefined): GrantOutcome {
    const { relationships, withdrawal } = decision;
    if (withdrawal) return { kind: 'withheld', ...withdrawal, zedToken };
    const projected = recordProjected(relationships);
    return {
      kind: 'enforced',
      relationships: relationships.length,
      zedToken,
      ...(projected && { projected }),
    };
  }

  nextStatus(grant: PolicyGrant, outcome: GrantOutcome | FailedProjection, now: Date): GrantStatusChange {
    return nextGrantStatus(grant, outcome, now, grantNamespaceBinding(grant, this.options.cluster));
  }

  statusWritten(grant: PolicyGrant, change: GrantStatusChange, now: Date): void {
    if (change.transition) this.announce(grant, change.transition, now);
  }

  /** An enforced grant's status must also count its relationships and carry the token of their write. */
  statusRecords(grant: PolicyGrant, { relationships }: Decision<WithheldReason>): boolean {
    if (!relationships) return true;
    return grant.status?.relationships === relationships.length && Boolean(grant.status.zedToken);
  }

  recall(grant: PolicyGrant, hadFinalizer: boolean): Recall | undefined {
    const projected = grant.status?.projected;
    if (projected) return { keys: projectedKeys(projected), zedToken: grant.status?.zedToken };
    if (!hadFinalizer || !mayHaveUnrecordedTuples(grant)) return undefined;
    const candidates = this.candidates(grant);
    if (neverEdited(grant)) return { keys: candidates, zedToken: undefined };
    return { repair: [...new Set(candidates.map(objectOfTupleKey))] };
  }

  requeueAfter(grant: PolicyGrant, now: Date): ReconcileResult | undefined {
    if (derivedState(grant, now) !== 'ACTIVE') return undefined;
    const untilExpiry = Date.parse(grant.spec.expiryTime) - now.getTime() + EXPIRY_MARGIN_MS;
    return { requeueAfter: untilExpiry };
  }

  private announce(grant: PolicyGrant, transition: EnforcedTransition, now: Date): void {
    const { to, from } = transition;
    const event: RecordedEvent = {
      type: to.status === 'True' || NORMAL_WITHDRAWALS.has(to.reason) ? 'Normal' : 'Warning',
      reason: to.reason,
      action: to.status === 'True' ? 'Project' : 'Withdraw',
      note: to.message,
    };
    void this.options.events.record(grant, event);
    this.options.logger.info(
      { grant: grantKey(grant), from, to: { status: to.status, reason: to.reason } },
      'Enforced changed',
    );
    const { metrics } = this.options;
    if (to.reason === GrantReason.Projected && (!from || from.reason === GrantReason.ProjectionFailed)) {
      metrics.observeLatency('enforced', grant.metadata.creationTimestamp, now);
    } else if (to.reason === GrantReason.Revoked && grant.spec.revokedAt) {
      metrics.observeLatency('revoked', grant.spec.revokedAt, now);
    } else if (to.reason === GrantReason.Expired) {
      metrics.observeLatency('expired', grant.spec.expiryTime, now);
    }
  }
}
