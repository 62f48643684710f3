import type { AccessRequestState } from '../../api/v1alpha1/index.js';
import { HttpError } from '../../http/errors.js';

// The state machine of an access request (docs/acl-access-requests.md, "Access requests"): from PENDING only, the item's
// deciders approve or reject, the consumer withdraws; the controller expires.

export type Decision = 'APPROVED' | 'REJECTED' | 'WITHDRAWN';

/** How the caller stands to a request: its consumer, a decider (owner or org_admin of the item), or both. */
export interface Standing {
  consumer: boolean;
  decider: boolean;
}

export function maySee(standing: Standing): boolean {
  return standing.consumer || standing.decider;
}

/** 403 unless the caller may take the decision; says nothing about the item. */
export function assertMayDecide(standing: Standing, decision: Decision, requestId: string): void {
  const allowed = decision === 'WITHDRAWN' ? standing.consumer : standing.decider;
  if (allowed) return;
  throw new HttpError(
    'Forbidden',
    decision === 'WITHDRAWN'
      ? `only the consumer who made access request ${requestId} may withdraw it`
      : `only the owner of the item or an org_admin of its organisation may approve or reject access request ${requestId}`,
  );
}

/** 409 unless the request is still pending: decisions are final. */
export function assertPending(state: AccessRequestState, requestId: string): void {
  if (state === 'PENDING') return;
  throw new HttpError(
    'Conflict',
    `access request ${requestId} is ${state}: only a PENDING request may be approved, rejected or withdrawn`,
  );
}
