import { delegationState, type Delegation } from '../api/v1alpha1/index.js';

// The verdict on a delegation, shared by the controller (its Enforced condition) and the explanation.

/** Reasons of a Delegation's Enforced condition besides Projected and ProjectionFailed. */
export const DelegationReason = {
  /** False: spec.revokedAt is set, or the object is being deleted. */
  Revoked: 'Revoked',
  /** False: past expiryTime. */
  Expired: 'Expired',
  /** False: the agent's Agent object is missing or names another owner (one owner per agent). */
  NotOwner: 'NotOwner',
} as const;

/** Why a delegation gives nothing. */
export interface DelegationWithdrawal {
  reason: (typeof DelegationReason)[keyof typeof DelegationReason];
  message: string;
}

/** Why a delegation gives nothing now, if it does not: revoked or deleted, expired, or not its agent's owner's. */
export function delegationWithdrawal(
  delegation: Delegation,
  owner: string | undefined,
  now: Date,
): DelegationWithdrawal | undefined {
  if (delegation.metadata.deletionTimestamp)
    return { reason: DelegationReason.Revoked, message: 'delegation deleted; removed from SpiceDB' };
  const state = delegationState(delegation.spec, now);
  if (state === 'DELETED') return { reason: DelegationReason.Revoked, message: 'delegation revoked' };
  if (state === 'EXPIRED') return { reason: DelegationReason.Expired, message: 'delegation expired' };
  if (owner !== delegation.spec.ownerId) {
    return {
      reason: DelegationReason.NotOwner,
      message:
        owner === undefined
          ? 'the agent has no Agent object naming its owner'
          : 'the agent belongs to another user: an agent acts for one owner only',
    };
  }
  return undefined;
}
