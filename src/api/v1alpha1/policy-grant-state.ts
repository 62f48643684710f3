import type { PolicyGrantSpec, PolicyGrantState } from './policy-grant.js';

/**
 * The state of a grant at `now`: DELETED once revoked, else EXPIRED once `now` reaches expiryTime, else
 * ACTIVE. An expiryTime that does not parse counts as expired: an unusable grant must never be active.
 */
export function derivedState(
  grant: { spec: Pick<PolicyGrantSpec, 'expiryTime' | 'revokedAt'> },
  now: Date,
): PolicyGrantState {
  if (grant.spec.revokedAt !== undefined) return 'DELETED';
  const expiresAt = Date.parse(grant.spec.expiryTime);
  return expiresAt > now.getTime() ? 'ACTIVE' : 'EXPIRED';
}
