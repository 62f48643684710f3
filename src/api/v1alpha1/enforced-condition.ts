/** The condition type that tells whether SpiceDB enforces a PolicyGrant. */
export const ENFORCED_CONDITION = 'Enforced';

/** Reasons of the Enforced condition. */
export const EnforcedReason = {
  /** True: the grant's relationships are written. */
  Projected: 'Projected',
  /** False: the grant is revoked; its relationships are removed. */
  Revoked: 'Revoked',
  /** False: the grant is past its expiryTime; its relationships are removed. */
  Expired: 'Expired',
  /** False: no CatalogItem has the grant's itemId, or more than one has. */
  ItemNotFound: 'ItemNotFound',
  /** False: a grant applied outside the ACL API's namespace and its item's organisation namespace. */
  NotAuthorized: 'NotAuthorized',
  /** False: another active grant already gives this subject the same access to the same item. */
  Conflict: 'Conflict',
  /** False: writing to SpiceDB failed; retried with backoff. */
  ProjectionFailed: 'ProjectionFailed',
} as const;
export type EnforcedReason = (typeof EnforcedReason)[keyof typeof EnforcedReason];
