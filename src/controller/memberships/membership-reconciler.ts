import { isMember, type Membership } from '../../api/v1alpha1/index.js';
import type { Logger } from '../../observability/logger.js';
import type { ReconcileResult } from '../../runtime/index.js';
import { SpiceDBError } from '../../spicedb/errors.js';
import { InvalidObjectIdError } from '../../spicedb/object-id.js';
import { hasFinalizer } from '../grants/grant-writer.js';
import { WriteExpectations } from '../write-expectations.js';
import type { MembershipProjector } from './membership-projector.js';
import {
  currentReason,
  MembershipReason,
  nextMembershipStatus,
  type MembershipOutcome,
} from './membership-status.js';
import type { MembershipWorld } from './membership-world.js';
import type { MembershipWriter } from './membership-writer.js';

export interface MembershipReconcilerOptions {
  world: MembershipWorld;
  projector: MembershipProjector;
  writer: Pick<MembershipWriter, 'setFinalizer' | 'updateStatus'>;
  logger: Logger;
  /** Told about every SpiceDB failure: one that says the schema is gone should be noticed at once. */
  onSpiceDBError(error: SpiceDBError): void;
  /** Whether a status written for the current generation may be believed (false once SpiceDB lost data). */
  trustStatus(): boolean;
  now?: () => Date;
}

/**
 * Brings one Membership's tuples and status in line with its spec: the finalizer first (for a member), then
 * SpiceDB (the member's tuples written, or a removed or deleted membership's deleted), then the status when it
 * changes. A failing projection stays visible on the object (Enforced=False, ProjectionFailed) and is retried
 * with the work queue's backoff: that is the dead letter.
 */
export class MembershipReconciler {
  private readonly now: () => Date;
  private readonly expectations = new WriteExpectations();

  constructor(private readonly options: MembershipReconcilerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  readonly reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> => {
    const cached = this.options.world.membership(key);
    if (!cached) return this.forget(key);
    if (this.expectations.isStale(key, cached.metadata.resourceVersion)) return undefined;
    if (cached.metadata.deletionTimestamp) return this.finalize(key, cached, signal);
    let membership = cached;
    if (isMember(membership) && !hasFinalizer(membership)) {
      const updated = await this.unlessStale(
        key,
        membership,
        this.options.writer.setFinalizer(membership, true, signal),
      );
      if (!updated) return { requeue: true };
      membership = updated;
    }
    const { outcome, failure } = await this.project(key, membership, signal);
    const written = await this.writeStatus(key, membership, outcome, signal);
    if (failure) throw failure;
    return written ? undefined : { requeue: true };
  };

  private async project(
    key: string,
    membership: Membership,
    signal: AbortSignal,
  ): Promise<{ outcome: MembershipOutcome; failure?: SpiceDBError }> {
    const kind = isMember(membership) ? 'projected' : 'removed';
    const { projector } = this.options;
    try {
      this.adoptStatus(key, membership);
      const { zedToken } = await projector.project(key, membership, signal);
      return { outcome: { kind, zedToken } };
    } catch (error) {
      if (error instanceof InvalidObjectIdError)
        return { outcome: { kind: 'failed', message: error.message } };
      if (!(error instanceof SpiceDBError)) throw error;
      this.options.onSpiceDBError(error);
      return { outcome: { kind: 'failed', message: error.message }, failure: error };
    }
  }

  /** A process that does not know what it wrote believes a status written for the current generation. */
  private adoptStatus(key: string, membership: Membership): void {
    const { projector, trustStatus } = this.options;
    if (projector.remembers(key) || !trustStatus()) return;
    const expected = isMember(membership) ? MembershipReason.Projected : MembershipReason.Removed;
    if (currentReason(membership) === expected) projector.adopt(key, membership);
  }

  /** The object is being deleted: delete its tuples, then release the finalizer. */
  private async finalize(
    key: string,
    membership: Membership,
    signal: AbortSignal,
  ): Promise<ReconcileResult | undefined> {
    if (!hasFinalizer(membership)) return this.forget(key);
    const { outcome, failure } = await this.project(key, membership, signal);
    if (failure) {
      await this.writeStatus(key, membership, outcome, signal);
      throw failure;
    }
    const released = await this.unlessStale(
      key,
      membership,
      this.options.writer.setFinalizer(membership, false, signal),
    );
    if (!released) return { requeue: true };
    this.options.logger.info({ membership: key }, 'membership relationships removed; finalizer released');
    return undefined;
  }

  private forget(key: string): undefined {
    this.options.projector.forget(key);
    this.expectations.forget(key);
    return undefined;
  }

  /** Writes the status if it changes; false when Kubernetes says the membership changed meanwhile. */
  private async writeStatus(
    key: string,
    membership: Membership,
    outcome: MembershipOutcome,
    signal: AbortSignal,
  ): Promise<boolean> {
    const change = nextMembershipStatus(membership, outcome, this.now());
    if (!change.changed) return true;
    const updated = await this.unlessStale(
      key,
      membership,
      this.options.writer.updateStatus(membership, change.status, signal),
    );
    return updated !== undefined;
  }

  /** The written object; undefined when Kubernetes says the membership changed or went meanwhile. */
  private unlessStale(
    key: string,
    before: Membership,
    write: Promise<Membership>,
  ): Promise<Membership | undefined> {
    return this.expectations.unlessStale(key, before.metadata.resourceVersion, write);
  }
}
