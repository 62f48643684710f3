import { isConflict, isNotFound } from '../../kube/index.js';
import type { Logger } from '../../observability/logger.js';
import type { ReconcileResult } from '../../runtime/index.js';
import { SpiceDBError } from '../../spicedb/errors.js';
import { InvalidObjectIdError } from '../../spicedb/object-id.js';
import {
  ReconcileFlow,
  type PhaseResult,
  type ProjectionContext,
  type SpiceDBHealth,
  type StatusChange,
} from '../reconcile-flow.js';
import type { LastWrites } from './last-writes.js';
import {
  ProjectionReason,
  type Decision,
  type FailedProjection,
  type ProjectedKind,
  type ProjectedObject,
} from './projected-kind.js';
import { currentReason } from './projected-status.js';
import type { Projector } from './projector.js';

export interface ProjectedReconcilerOptions<
  T extends ProjectedObject,
  Outcome,
  Status,
  Reason extends string,
> extends SpiceDBHealth {
  kind: ProjectedKind<T, Outcome, Status, Reason>;
  projector: Projector<T>;
  /** The projector's record of the last writes. */
  lastWrites: LastWrites;
  writer: {
    setFinalizer(object: T, present: boolean, signal: AbortSignal): Promise<T>;
    updateStatus(object: T, status: Status, signal: AbortSignal): Promise<T>;
  };
  logger: Logger;
  /** Runs before a deleted object's finalizer is released (the audit of a grant's deletion); a failure retries. */
  beforeRelease?: (object: T) => Promise<void>;
  now?: () => Date;
}

/**
 * Brings one object's tuples and status in line with its spec, for every projected kind: the finalizer first,
 * then SpiceDB (its tuples written, or a withdrawn or deleted object's deleted), then the status when it changes
 * (the kind's hooks say what it holds and what a transition announces), then a requeue for the moment the object
 * stops counting by itself. A failing projection stays visible on the object (Enforced=False, ProjectionFailed)
 * and is retried with the work queue's backoff: that is the dead letter.
 */
export class ProjectedReconciler<
  T extends ProjectedObject,
  Outcome,
  Status,
  Reason extends string = string,
> extends ReconcileFlow<T, Outcome | FailedProjection, Status> {
  protected readonly kindName: string;
  private readonly kind: ProjectedKind<T, Outcome, Status, Reason>;

  constructor(private readonly options: ProjectedReconcilerOptions<T, Outcome, Status, Reason>) {
    super(options.now);
    this.kind = options.kind;
    this.kindName = options.kind.name;
  }

  protected cached(key: string): T | undefined {
    return this.kind.object(key);
  }

  /** Gone from the cache without passing the finalizer (e.g. it was removed by hand): delete what we wrote. */
  protected async forget(key: string): Promise<void> {
    const { lastWrites, projector } = this.options;
    if (lastWrites.get(key)?.keys.length) await projector.withdraw(key, undefined);
    lastWrites.forget(key);
  }

  protected wantsFinalizer(object: T): boolean {
    return this.kind.wantsFinalizer(object);
  }

  protected addFinalizer(object: T, signal: AbortSignal): Promise<T> {
    return this.options.writer.setFinalizer(object, true, signal);
  }

  protected async project(
    key: string,
    object: T,
    { now, signal, hadFinalizer }: ProjectionContext,
  ): Promise<PhaseResult<Outcome | FailedProjection>> {
    const { projector } = this.options;
    try {
      const decision = this.kind.decide(object, now);
      const write = { signal, repair: this.recall(key, object, hadFinalizer, decision) };
      const zedToken = decision.relationships
        ? await projector.enforce(key, decision.relationships, write)
        : (await projector.withdraw(key, object, write)).zedToken;
      return { outcome: this.kind.outcome(decision, zedToken) };
    } catch (error) {
      return this.failed(error);
    }
  }

  /** The object is being deleted: remove its tuples. */
  protected async withdraw(
    key: string,
    object: T,
    signal: AbortSignal,
  ): Promise<PhaseResult<FailedProjection> | undefined> {
    try {
      await this.options.projector.withdraw(key, object, { signal, repair: this.recall(key, object, true) });
      return undefined;
    } catch (error) {
      return this.failed(error);
    }
  }

  /** An id SpiceDB cannot hold fails for good (no retry); a SpiceDB failure is retried with backoff. */
  private failed(error: unknown): PhaseResult<FailedProjection> {
    if (error instanceof InvalidObjectIdError) return { outcome: { kind: 'failed', message: error.message } };
    if (!(error instanceof SpiceDBError)) throw error;
    this.options.onSpiceDBError(error);
    return { outcome: { kind: 'failed', message: error.message }, failure: error };
  }

  protected override beforeRelease(object: T): Promise<void> {
    return this.options.beforeRelease?.(object) ?? Promise.resolve();
  }

  protected async releaseFinalizer(_key: string, object: T, signal: AbortSignal): Promise<boolean> {
    const removed = await this.options.writer.setFinalizer(object, false, signal).catch((error: unknown) => {
      if (isNotFound(error)) return object; // already gone
      if (isConflict(error)) return undefined;
      throw error;
    });
    return removed !== undefined;
  }

  protected released(key: string): void {
    this.options.lastWrites.forget(key);
    const { name } = this.kind;
    this.options.logger.info({ [name]: key }, `${name} relationships removed; finalizer released`);
  }

  protected nextStatus(object: T, outcome: Outcome | FailedProjection, now: Date): StatusChange<Status> {
    return this.kind.nextStatus(object, outcome, now);
  }

  protected updateStatus(object: T, status: Status, signal: AbortSignal): Promise<T> {
    return this.options.writer.updateStatus(object, status, signal);
  }

  protected override statusWritten(written: T, change: StatusChange<Status>, now: Date): void {
    this.kind.statusWritten?.(written, change, now);
  }

  protected requeueAfter(object: T, now: Date): ReconcileResult | undefined {
    return this.kind.requeueAfter(object, now);
  }

  /**
   * When this process has no record of what it wrote for the object (a start, a new term of leadership, a
   * SpiceDB recovery): believes a status that says `decision` was written for the current generation; else
   * recalls what the status says was last written. Returns the objects to repair when nothing says what was
   * written although something may have been.
   */
  private recall(key: string, object: T, hadFinalizer: boolean, decision?: Decision<Reason>): string[] {
    const { lastWrites, projector, trustStatus } = this.options;
    if (lastWrites.get(key)) return [];
    if (decision && trustStatus() && this.statusRecords(object, decision)) {
      projector.adopt(key, object, decision, object.status?.zedToken);
      return [];
    }
    const recalled = this.kind.recall?.(object, hadFinalizer);
    if (!recalled) return [];
    if ('repair' in recalled) return recalled.repair;
    projector.recall(key, recalled.keys, recalled.zedToken);
    return [];
  }

  private statusRecords(object: T, decision: Decision<Reason>): boolean {
    const expected = decision.withdrawal?.reason ?? ProjectionReason.Projected;
    return currentReason(object) === expected && (this.kind.statusRecords?.(object, decision) ?? true);
  }
}
