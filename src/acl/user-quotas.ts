import { HttpError } from '../http/errors.js';

/**
 * Per-user bounds on the objects a user's requests create (docs/acl-api.md, "Limits and quotas"). They count
 * the objects that exist, finished ones included, until garbage collection removes them after its retention:
 * etcd holds what exists, whatever its state, so that is what a user must not grow without bound.
 */
export interface UserQuotas {
  /** Delegation objects whose delegating user is the caller. */
  delegations: number;
  /** Distinct agents among the caller's Delegation objects. */
  agents: number;
  /** AccessRequest objects the caller made. */
  accessRequests: number;
}

/** The environment variable that sets each quota: a refusal names it, so an operator knows what to raise. */
export const QUOTA_VARIABLES: Record<keyof UserQuotas, string> = {
  delegations: 'ACL_MAX_DELEGATIONS_PER_USER',
  agents: 'ACL_MAX_AGENTS_PER_USER',
  accessRequests: 'ACL_MAX_ACCESS_REQUESTS_PER_USER',
};

export const DEFAULT_USER_QUOTAS: UserQuotas = { delegations: 1000, agents: 100, accessRequests: 1000 };

/** 409 naming the quota when one more object of `quota` would exceed it. */
export function assertBelowQuota(quotas: UserQuotas, quota: keyof UserQuotas, held: number): void {
  const limit = quotas[quota];
  if (held < limit) return;
  throw new HttpError(
    'Conflict',
    `quota ${QUOTA_VARIABLES[quota]}=${limit} reached: the caller holds ${held} ${quotaNoun(quota)}; ` +
      'finished ones count until garbage collection removes them',
  );
}

function quotaNoun(quota: keyof UserQuotas): string {
  return quota === 'accessRequests' ? 'access requests' : quota;
}
