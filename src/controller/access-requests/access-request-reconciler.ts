import {
  accessRequestState,
  type AccessRequest,
  type AccessRequestState,
  type AccessRequestStatus,
} from '../../api/v1alpha1/index.js';
import { isConflict, isNotFound } from '../../kube/index.js';
import type { Informer, ReconcileResult } from '../../runtime/index.js';
import type { ObjectWriter } from '../../kube/object-writer.js';
import type { AuditStore } from '../../audit/audit-store.js';
import { expiryChange } from '../audit/access-request-expiry.js';
import type { EventRecorder } from '../event-recorder.js';
import { pendingDeadline, worthAnnouncing } from './pending-deadline.js';

/** Who status.decidedBy names for an expiry. */
export const EXPIRED_BY = 'policy-grant-controller';

const EVENT_REASONS: Record<Exclude<AccessRequestState, 'PENDING'>, string> = {
  APPROVED: 'Approved',
  REJECTED: 'Rejected',
  WITHDRAWN: 'Withdrawn',
  EXPIRED: 'Expired',
};

export interface AccessRequestReconcilerOptions {
  cache: Pick<Informer<AccessRequest>, 'get'>;
  /** Conditioned on the resourceVersion, under the controller's field manager. */
  writer: Pick<ObjectWriter<AccessRequest>, 'updateStatus'>;
  events: Pick<EventRecorder, 'record'>;
  /** How long a request may stay PENDING (ACCESS_REQUEST_PENDING_TTL). */
  pendingTtlMs: number;
  isLeader: () => boolean;
  now: () => Date;
  /** With an audit store: each expiry is recorded once (accessrequest.expired). */
  audit?: {
    store: Pick<AuditStore, 'appendOnce'>;
    organisationOfItem(itemId: string): string | undefined;
  };
}

/**
 * The controller's part of the access-request lifecycle (docs/controller.md, "Access requests"): a request
 * PENDING longer than the TTL becomes EXPIRED (a status write conditioned on the resourceVersion, so a decision
 * the ACL API writes first wins, and recorded in the audit trail once), with a requeue at the due time until
 * then; a request applied without a state is marked PENDING, so that `kubectl get` shows it; every decision
 * gets one Event on the request (named after the decision, so that relists, restarts and failovers record it
 * once).
 */
export class AccessRequestReconciler {
  constructor(private readonly options: AccessRequestReconcilerOptions) {}

  reconcile = async (key: string, signal: AbortSignal): Promise<ReconcileResult | undefined> => {
    const request = this.options.cache.get(key);
    if (!request) return undefined;
    if (accessRequestState(request) !== 'PENDING') {
      await this.recordExpiry(request);
      await this.announce(request);
      return undefined;
    }
    const leftMs = pendingDeadline(request, this.options.pendingTtlMs) - this.options.now().getTime();
    if (leftMs > 0) {
      if (request.status?.state === undefined) await this.write(request, { state: 'PENDING' }, signal);
      return { requeueAfter: leftMs };
    }
    await this.write(
      request,
      {
        state: 'EXPIRED',
        decidedBy: EXPIRED_BY,
        decidedAt: this.options.now().toISOString(),
        reason: `pending longer than ${Math.round(this.options.pendingTtlMs / 1000)} s without a decision`,
      },
      signal,
    );
    return undefined;
  };

  /** Leader only, and only for the version seen: a 409 or 404 means news, which the informer brings. */
  private async write(
    request: AccessRequest,
    change: AccessRequestStatus,
    signal: AbortSignal,
  ): Promise<void> {
    if (signal.aborted || !this.options.isLeader()) return;
    try {
      await this.options.writer.updateStatus(request, { ...request.status, ...change }, signal);
    } catch (error) {
      if (isConflict(error) || isNotFound(error)) return;
      throw error;
    }
  }

  /** Leader only; a failure throws, so the reconcile is retried rather than the record lost. */
  private async recordExpiry(request: AccessRequest): Promise<void> {
    const { audit, isLeader } = this.options;
    const expiredHere = accessRequestState(request) === 'EXPIRED' && request.status?.decidedBy === EXPIRED_BY;
    if (!audit || !expiredHere || !isLeader()) return;
    const organisationId = audit.organisationOfItem(request.spec.itemId);
    await audit.store.appendOnce([expiryChange(request, EXPIRED_BY, organisationId)]);
  }

  private async announce(request: AccessRequest): Promise<void> {
    const state = accessRequestState(request) as Exclude<AccessRequestState, 'PENDING'>;
    if (!worthAnnouncing(request.status?.decidedAt, this.options.now())) return;
    const { decidedBy = 'unknown', reason } = request.status ?? {};
    await this.options.events.record(request, {
      type: 'Normal',
      reason: EVENT_REASONS[state],
      action: 'Decide',
      note: `${state} by ${decidedBy}${reason ? `: ${reason}` : ''}`,
      once: state.toLowerCase(),
    });
  }
}
