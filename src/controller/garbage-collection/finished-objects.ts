import {
  accessRequestState,
  type AccessRequest,
  type Delegation,
  type MembershipSpec,
} from '../../api/v1alpha1/index.js';

// When each kind the garbage collector removes is finished, in epoch milliseconds: pure functions, so the rules
// are tested without a cluster. Undefined: not finished, and nothing but a change of the object will finish it.

/** A delegation finishes when revoked, or at its expiry (a time that may lie ahead: it will finish then). */
export function delegationFinishedAt(delegation: Pick<Delegation, 'spec'>): number | undefined {
  const { revokedAt, expiryTime } = delegation.spec;
  const at = Date.parse(revokedAt ?? expiryTime);
  return Number.isNaN(at) ? undefined : at;
}

/** A request finishes when it leaves PENDING (approved, rejected, withdrawn or expired): at status.decidedAt. */
export function accessRequestFinishedAt(request: Pick<AccessRequest, 'status'>): number | undefined {
  if (accessRequestState(request) === 'PENDING') return undefined;
  const at = Date.parse(request.status?.decidedAt ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/** A membership finishes when the user is removed: at spec.removedAt. */
export function membershipFinishedAt(membership: {
  spec: Pick<MembershipSpec, 'removedAt'>;
}): number | undefined {
  const at = Date.parse(membership.spec.removedAt ?? '');
  return Number.isNaN(at) ? undefined : at;
}
