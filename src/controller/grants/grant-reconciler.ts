import {
  derivedState,
  ENFORCED_CONDITION,
  findStatusCondition,
  type PolicyGrant,
  type PolicyGrantStatus,
} from '../../api/v1alpha1/index.js';
import type { Logger } from '../../observability/logger.js';
import { isConflict, isNotFound } from '../../kube/index.js';
import type { ReconcileResult } from '../../runtime/index.js';
import { SpiceDBError } from '../../spicedb/errors.js';
import type { ClusterView } from '../cluster-view.js';
import type { GrantMetrics } from '../controller-metrics.js';
import type { EventRecorder, RecordedEvent } from '../event-recorder.js';
import type { GrantProjector } from './grant-projector.js';
import {
  nextGrantStatus,
  type EnforcedTransition,
  type GrantOutcome,
  type GrantStatusChange,
} from './grant-status.js';
import {
  grantKey,
  grantNamespaceBinding,
  GrantReason,
  type GrantVerdict,
} from '../../verdict/grant-verdict.js';
import type { ObjectWriter } from '../../kube/object-writer.js';
import { projectedKeys, recordProjected } from './projected-tuples.js';
import { candidateTupleKeys } from '../../verdict/projection.js';
import type { LastWrites } from './last-writes.js';
import { objectOfTupleKey } from '../../verdict/tuple-key.js';
import {
  ReconcileFlow,
  type PhaseResult,
  type ProjectionContext,
  type SpiceDBHealth,
} from '../reconcile-flow.js';

/**
 * `trustStatus`: whether a status that says what was written for the grant's current generation may be
 * believed without writing again (see GrantProjector.adoptEnforced).
 */
export interface GrantReconcilerOptions extends SpiceDBHealth {
  world: ClusterView;
  projector: GrantProjector;
  lastWrites: LastWrites;
  writer: Pick<ObjectWriter<PolicyGrant>, 'setFinalizer' | 'updateStatus'>;
  events: Pick<EventRecorder, 'record'>;
  metrics: GrantMetrics;
  logger: Logger;
  /** Runs before a deleted grant's finalizer is released (the audit of the deletion); a failure retries. */
  beforeRelease?: (grant: PolicyGrant) => Promise<void>;
  now?: () => Date;
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
 * SpiceDB needed. That is the common case because the ACL API creates grants with the finalizer (docs/controller.md, "Finalizer from
 * birth"): every new grant has the finalizer and no status, and a repair read under the item's lock for each
 * one would cost more than the finalizer patch it saves.
 */
function neverEdited(grant: PolicyGrant): boolean {
  return (grant.metadata.generation ?? 1) === 1;
}

/**
 * Brings one PolicyGrant's tuples and status in line with its spec, its CatalogItem and its namespace:
 * finalizer first, then SpiceDB (write or withdraw), then the status (only when it changes), an Event on
 * every transition of Enforced, and a requeue at expiryTime while the grant is active.
 */
export class GrantReconciler extends ReconcileFlow<PolicyGrant, GrantOutcome, PolicyGrantStatus> {
  protected readonly kindName = 'policygrant';

  constructor(private readonly options: GrantReconcilerOptions) {
    super(options.now);
  }

  protected cached(key: string): PolicyGrant | undefined {
    return this.options.world.grant(key);
  }

  /** Gone from the cache without passing the finalizer (e.g. it was removed by hand): delete what we wrote. */
  protected async forget(key: string): Promise<void> {
    const { lastWrites, projector } = this.options;
    if (lastWrites.get(key)?.keys.length) await projector.withdraw(key, undefined);
    lastWrites.forget(key);
  }

  protected wantsFinalizer(): boolean {
    return true;
  }

  protected addFinalizer(grant: PolicyGrant, signal: AbortSignal): Promise<PolicyGrant> {
    return this.options.writer.setFinalizer(grant, true, signal);
  }

  protected async project(
    key: string,
    grant: PolicyGrant,
    { now, signal, hadFinalizer }: ProjectionContext,
  ): Promise<PhaseResult<GrantOutcome>> {
    const { world, projector } = this.options;
    const verdict = world.evaluator(now).evaluate(grant);
    const write = { signal, repair: this.recall(key, grant, hadFinalizer, verdict) };
    try {
      if (verdict.enforce) {
        const zedToken = await projector.enforce(key, verdict.relationships, write);
        const { length } = verdict.relationships;
        const projected = recordProjected(verdict.relationships);
        return {
          outcome: { kind: 'enforced', relationships: length, zedToken, ...(projected && { projected }) },
        };
      }
      const { zedToken } = await projector.withdraw(key, grant, write);
      return { outcome: { kind: 'withheld', reason: verdict.reason, message: verdict.message, zedToken } };
    } catch (error) {
      return this.failed(error);
    }
  }

  /** The grant is being deleted: remove its tuples. */
  protected async withdraw(
    key: string,
    grant: PolicyGrant,
    signal: AbortSignal,
  ): Promise<PhaseResult<GrantOutcome> | undefined> {
    try {
      await this.options.projector.withdraw(key, grant, { signal, repair: this.recall(key, grant, true) });
      return undefined;
    } catch (error) {
      return this.failed(error);
    }
  }

  private failed(error: unknown): PhaseResult<GrantOutcome> {
    if (!(error instanceof SpiceDBError)) throw error;
    this.options.onSpiceDBError(error);
    return { outcome: { kind: 'failed', message: error.message }, failure: error };
  }

  protected override beforeRelease(grant: PolicyGrant): Promise<void> {
    return this.options.beforeRelease?.(grant) ?? Promise.resolve();
  }

  protected async releaseFinalizer(_key: string, grant: PolicyGrant, signal: AbortSignal): Promise<boolean> {
    const removed = await this.options.writer.setFinalizer(grant, false, signal).catch((error: unknown) => {
      if (isNotFound(error)) return grant; // already gone
      if (isConflict(error)) return undefined;
      throw error;
    });
    return removed !== undefined;
  }

  protected released(key: string): void {
    this.options.lastWrites.forget(key);
    this.options.logger.info({ grant: key }, 'relationships removed; finalizer released');
  }

  protected nextStatus(grant: PolicyGrant, outcome: GrantOutcome, now: Date): GrantStatusChange {
    return nextGrantStatus(grant, outcome, now, grantNamespaceBinding(grant, this.options.world));
  }

  protected updateStatus(
    grant: PolicyGrant,
    status: PolicyGrantStatus,
    signal: AbortSignal,
  ): Promise<PolicyGrant> {
    return this.options.writer.updateStatus(grant, status, signal);
  }

  protected override statusWritten(grant: PolicyGrant, change: GrantStatusChange, now: Date): void {
    if (change.transition) this.announce(grant, change.transition, now);
  }

  /**
   * When this process has no record of what it wrote for the grant (a start, a new term of leadership, a
   * SpiceDB recovery): believes a status that says what was written for the current generation; else recalls
   * what the status says was last written, so an edit's old tuples go at once. Returns the objects to repair
   * when nothing says what was written although something may have been: the current projection's resource.
   */
  private recall(key: string, grant: PolicyGrant, hadFinalizer: boolean, verdict?: GrantVerdict): string[] {
    if (this.options.lastWrites.get(key)) return [];
    if (verdict && this.options.trustStatus()) this.adoptStatus(key, grant, verdict);
    if (this.options.lastWrites.get(key)) return [];
    const projected = grant.status?.projected;
    if (projected) {
      this.options.projector.recall(key, projectedKeys(projected), grant.status?.zedToken);
      return [];
    }
    if (!hadFinalizer || !mayHaveUnrecordedTuples(grant)) return [];
    const candidates = candidateTupleKeys(grant.spec, this.options.world.registry);
    if (neverEdited(grant)) {
      this.options.projector.recall(key, candidates, undefined);
      return [];
    }
    return [...new Set(candidates.map(objectOfTupleKey))];
  }

  private adoptStatus(key: string, grant: PolicyGrant, verdict: GrantVerdict): void {
    const { status } = grant;
    const generation = grant.metadata.generation ?? 0;
    const condition = findStatusCondition(status?.conditions ?? [], ENFORCED_CONDITION);
    if (
      !status ||
      !condition ||
      condition.observedGeneration !== generation ||
      status.observedGeneration !== generation
    ) {
      return;
    }
    if (verdict.enforce) {
      const projected =
        condition.reason === GrantReason.Projected && status.relationships === verdict.relationships.length;
      if (projected && status.zedToken)
        this.options.projector.adoptEnforced(key, verdict.relationships, status.zedToken);
    } else if (condition.status === 'False' && condition.reason === verdict.reason) {
      this.options.projector.adoptWithdrawal(key, grant, status.zedToken);
    }
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

  protected requeueAfter(grant: PolicyGrant, now: Date): ReconcileResult | undefined {
    if (derivedState(grant, now) !== 'ACTIVE') return undefined;
    const untilExpiry = Date.parse(grant.spec.expiryTime) - now.getTime() + EXPIRY_MARGIN_MS;
    return { requeueAfter: untilExpiry };
  }
}
