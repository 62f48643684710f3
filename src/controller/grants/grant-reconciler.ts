import {
  derivedState,
  ENFORCED_CONDITION,
  findStatusCondition,
  hasFinalizer,
  type PolicyGrant,
} from '../../api/v1alpha1/index.js';
import type { Logger } from '../../observability/logger.js';
import { isConflict, isNotFound, type ReconcileResult } from '../../runtime/index.js';
import { SpiceDBError } from '../../spicedb/errors.js';
import type { ClusterView } from '../cluster-view.js';
import type { GrantMetrics } from '../controller-metrics.js';
import type { EventRecorder, RecordedEvent } from '../event-recorder.js';
import type { GrantProjector } from './grant-projector.js';
import { nextGrantStatus, type EnforcedTransition, type GrantOutcome } from './grant-status.js';
import { grantKey, GrantReason, type GrantVerdict } from '../../verdict/grant-verdict.js';
import type { ObjectWriter } from '../../kube/object-writer.js';
import { projectedKeys, recordProjected } from './projected-tuples.js';
import { candidateTupleKeys } from '../../verdict/projection.js';
import type { ProjectionMemory } from './projection-memory.js';
import { objectOfTupleKey } from '../../verdict/tuple-key.js';
import { WriteExpectations } from '../write-expectations.js';

export interface GrantReconcilerOptions {
  world: ClusterView;
  projector: GrantProjector;
  memory: ProjectionMemory;
  writer: Pick<ObjectWriter<PolicyGrant>, 'setFinalizer' | 'updateStatus'>;
  events: Pick<EventRecorder, 'record'>;
  metrics: GrantMetrics;
  logger: Logger;
  /** Told about every SpiceDB failure: one that says the schema is gone should be noticed at once. */
  onSpiceDBError(error: SpiceDBError): void;
  /**
   * Whether a status that says what was written for the grant's current generation may be believed without
   * writing again (see GrantProjector.adoptEnforced). False once SpiceDB may have lost data under this process.
   */
  trustStatus(): boolean;
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
 * relationships written (a status from before the record; a failure keeps the count of the last success), or
 * there is no outcome at all (a leader died between the SpiceDB write and the status).
 */
function mayHaveUnrecordedTuples(grant: PolicyGrant): boolean {
  const { status } = grant;
  if (status?.projected) return false;
  const condition = findStatusCondition(status?.conditions ?? [], ENFORCED_CONDITION);
  return !condition || (status?.relationships ?? 0) > 0;
}

/**
 * Whether the grant's spec is the one it was created with (the API server counts spec changes in
 * `generation`; a deletion may count as one too: then the read is made). Whatever a leader that died before writing the status may have
 * written for such a grant follows from this spec alone: its projection, no read of SpiceDB needed. That is
 * the common case since the ACL API creates grants with the finalizer (docs/controller.md, "Finalizer from
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
export class GrantReconciler {
  private readonly now: () => Date;
  private readonly expectations = new WriteExpectations();

  constructor(private readonly options: GrantReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> => {
    const cached = this.options.world.grant(key);
    if (!cached) return this.forgetGone(key);
    if (this.expectations.isStale(key, cached.metadata.resourceVersion)) return undefined;
    if (cached.metadata.deletionTimestamp) return this.finalize(key, cached, signal);
    let grant = cached;
    if (!hasFinalizer(grant)) {
      const updated = await this.unlessStale(
        key,
        grant,
        this.options.writer.setFinalizer(grant, true, signal),
      );
      if (!updated) return { requeue: true };
      grant = updated;
    }
    const now = this.now();
    const { outcome, failure } = await this.project(key, grant, now, signal, hasFinalizer(cached));
    const written = await this.writeStatus(grant, outcome, now, signal);
    if (failure) throw failure;
    if (!written) return { requeue: true };
    return this.requeueAtExpiry(grant, now);
  };

  private async project(
    key: string,
    grant: PolicyGrant,
    now: Date,
    signal: AbortSignal,
    hadFinalizer: boolean,
  ): Promise<{ outcome: GrantOutcome; failure?: SpiceDBError }> {
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
      if (!(error instanceof SpiceDBError)) throw error;
      this.options.onSpiceDBError(error);
      return { outcome: { kind: 'failed', message: error.message }, failure: error };
    }
  }

  /**
   * When this process has no record of what it wrote for the grant (a start, a new term of leadership, a
   * SpiceDB recovery): believes a status that says what was written for the current generation; else recalls
   * what the status says was last written, so an edit's old tuples go at once. Returns the objects to repair
   * when nothing says what was written although something may have been: the current projection's resource.
   */
  private recall(key: string, grant: PolicyGrant, hadFinalizer: boolean, verdict?: GrantVerdict): string[] {
    if (this.options.memory.get(key)) return [];
    if (verdict && this.options.trustStatus()) this.adoptStatus(key, grant, verdict);
    if (this.options.memory.get(key)) return [];
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

  /** The CR is being deleted: remove its tuples, then the finalizer. */
  private async finalize(
    key: string,
    grant: PolicyGrant,
    signal: AbortSignal,
  ): Promise<ReconcileResult | undefined> {
    if (!hasFinalizer(grant)) return this.forgetGone(key);
    try {
      await this.options.projector.withdraw(key, grant, { signal, repair: this.recall(key, grant, true) });
    } catch (error) {
      if (!(error instanceof SpiceDBError)) throw error;
      this.options.onSpiceDBError(error);
      await this.writeStatus(grant, { kind: 'failed', message: error.message }, this.now(), signal);
      throw error;
    }
    await this.options.beforeRelease?.(grant);
    const removed = await this.options.writer.setFinalizer(grant, false, signal).catch((error: unknown) => {
      if (isNotFound(error)) return grant; // already gone
      if (isConflict(error)) return undefined;
      throw error;
    });
    if (!removed) return { requeue: true };
    this.options.memory.forget(key);
    this.options.logger.info({ grant: key }, 'relationships removed; finalizer released');
    return undefined;
  }

  /** Gone from the cache without passing the finalizer (e.g. it was removed by hand): delete what we wrote. */
  private async forgetGone(key: string): Promise<undefined> {
    const { memory, projector } = this.options;
    if (memory.get(key)?.keys.length) await projector.withdraw(key, undefined);
    memory.forget(key);
    this.expectations.forget(key);
    return undefined;
  }

  /** Writes the status if it changes; false when Kubernetes says the grant changed meanwhile. */
  private async writeStatus(
    grant: PolicyGrant,
    outcome: GrantOutcome,
    now: Date,
    signal: AbortSignal,
  ): Promise<boolean> {
    const change = nextGrantStatus(grant, outcome, now);
    if (!change.changed) return true;
    const updated = await this.unlessStale(
      grantKey(grant),
      grant,
      this.options.writer.updateStatus(grant, change.status, signal),
    );
    if (!updated) return false;
    if (change.transition) this.announce(updated, change.transition, now);
    return true;
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

  private requeueAtExpiry(grant: PolicyGrant, now: Date): ReconcileResult | undefined {
    if (derivedState(grant, now) !== 'ACTIVE') return undefined;
    const untilExpiry = Date.parse(grant.spec.expiryTime) - now.getTime() + EXPIRY_MARGIN_MS;
    return { requeueAfter: untilExpiry };
  }

  /** The written object; undefined when Kubernetes says the grant changed or went meanwhile. */
  private unlessStale(
    key: string,
    before: PolicyGrant,
    write: Promise<PolicyGrant>,
  ): Promise<PolicyGrant | undefined> {
    return this.expectations.unlessStale(key, before.metadata.resourceVersion, write);
  }
}
