import type { CatalogItem, PolicyGrant } from '../api/v1alpha1/index.js';
import { hasRole, ORG_ADMIN, type Principal } from '../auth/principal.js';
import { isCheckCaller, type CheckCallers } from '../decision/check-callers.js';
import { HttpError } from '../http/errors.js';
import { isUserId } from './policies/principal-ids.js';

// Who may do what (docs/acl-api.md, "Who may do what"), as pure predicates over the caller and the
// CatalogItem the action is about.

export { ORG_ADMIN };
export const COS_ADMIN = 'cos_admin';

/** The CatalogItems that carry one itemId: exactly one is usable; none or several are not. */
export type ItemLookup =
  { kind: 'found'; item: CatalogItem } | { kind: 'missing' } | { kind: 'ambiguous'; names: string[] };

export function lookupItem(candidates: readonly CatalogItem[]): ItemLookup {
  const [first] = candidates;
  if (first === undefined) return { kind: 'missing' };
  if (candidates.length === 1) return { kind: 'found', item: first };
  return { kind: 'ambiguous', names: candidates.map((item) => item.metadata.name ?? '').sort() };
}

export function isOrgAdminOf(principal: Principal, organisationId: string): boolean {
  return hasRole(principal, ORG_ADMIN) && principal.organisationId === organisationId;
}

/** The item's owner, or an org_admin whose organisation claim is the item's organisation. */
export function administersItem(principal: Principal, item: CatalogItem): boolean {
  return principal.id === item.spec.ownerId || isOrgAdminOf(principal, item.spec.organisationId);
}

/**
 * Authority before item facts: whether the caller may learn what the catalog says about an itemId (that no
 * CatalogItem or several carry it, its itemType, its access types). cos_admin may (platform operators see
 * every grant already); anyone else only when at least one CatalogItem carries the itemId and they
 * administer every one of them, that is, when they could grant on the item if it were as they named it.
 * Everyone else gets one 403, whatever the catalog holds.
 */
export function mayLearnItemFacts(principal: Principal, candidates: readonly CatalogItem[]): boolean {
  if (hasRole(principal, COS_ADMIN)) return true;
  return candidates.length > 0 && candidates.every((item) => administersItem(principal, item));
}

/** Create: the item's administrators only (not cos_admin: the spec's role table names no platform role). */
export function mayCreateOn(principal: Principal, item: CatalogItem): boolean {
  return administersItem(principal, item);
}

/**
 * Revoke: the grant's issuer, the item's administrators, or cos_admin (platform operators must be able to
 * withdraw any grant, e.g. in an incident, without kubectl). An item that is unknown or ambiguous has no
 * administrators, so only the issuer and cos_admin may revoke grants on it.
 */
export function mayRevoke(principal: Principal, grant: PolicyGrant, item: CatalogItem | undefined): boolean {
  return (
    principal.id === grant.spec.issuerId ||
    hasRole(principal, COS_ADMIN) ||
    (item !== undefined && administersItem(principal, item))
  );
}

/**
 * Verify: the user themself, the item's administrators, cos_admin, or an enforcement point (a JWT or Basic
 * application with a role of `enforcementPoints`, as for /v1/check): platform components call verify at access
 * time on behalf of users they serve. Any other caller asking about another user would have an oracle of who
 * may access what.
 */
export function mayVerify(
  principal: Principal,
  userId: string,
  item: CatalogItem | undefined,
  enforcementPoints: CheckCallers,
): boolean {
  return (
    principal.id === userId ||
    isCheckCaller(principal, enforcementPoints) ||
    hasRole(principal, COS_ADMIN) ||
    (item !== undefined && administersItem(principal, item))
  );
}

/**
 * Only callers with a user id may `action`: users, and applications whose credential names a userId (the id
 * the request records as its author).
 */
export function assertHasUserId(principal: Principal, action: string): void {
  if (!isUserId(principal.id)) {
    throw new HttpError(
      'Forbidden',
      `caller ${principal.id} has no user id: only users (or applications whose credential names a userId) ${action}`,
    );
  }
}

/** Only a user may `action`: an application may not, even when its credential names a userId. */
export function assertIsUser(principal: Principal, action: string): void {
  if (principal.kind !== 'user') {
    throw new HttpError('Forbidden', `only a user may ${action} (applications may not)`);
  }
}
