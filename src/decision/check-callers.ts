import { boundOrganisations, hasRole } from '../auth/principal.js';
import type { Principal } from '../auth/principal.js';
import { DECISION_CLIENT_ROLE } from '../config/decision-clients.js';
import type { CallerRule } from '../http/openapi/route-definition.js';
import type { OrganisationScope } from './organisation-scope.js';

/**
 * The enforcement points: the only callers that may ask about any subject, resource and relation. Anyone else
 * authenticated would turn the check into an oracle of who may access what.
 */
export interface CheckCallers {
  /** A JWT whose roles claim, or a Basic application whose `roles`, holds one of these. */
  roles: readonly string[];
  /** ServiceAccounts (verified by TokenReview) as `<namespace>:<name>`. */
  serviceAccounts: readonly string[];
}

export const DEFAULT_CHECK_CALLERS: CheckCallers = { roles: [DECISION_CLIENT_ROLE], serviceAccounts: [] };

/** Whether `principal` is one of `callers`. */
export function isCheckCaller(principal: Principal, callers: CheckCallers): boolean {
  if (callers.roles.some((role) => hasRole(principal, role))) return true;
  return principal.serviceAccount !== undefined && callers.serviceAccounts.includes(principal.serviceAccount);
}

/** Who may check, for the 403 everyone else gets; names the roles, not the ServiceAccounts. */
export function checkCallersRequirement(callers: CheckCallers): string {
  const roles = callers.roles.length > 0 ? `callers with the role ${callers.roles.join(' or ')}` : undefined;
  const serviceAccounts = callers.serviceAccounts.length > 0 ? 'the listed ServiceAccounts' : undefined;
  const who = [roles, serviceAccounts].filter(Boolean).join(' and ') || 'no caller (none is configured)';
  return `only enforcement points may call the check: ${who}`;
}

/** The check route's access rule. */
export function checkCallerRule(callers: CheckCallers): CallerRule {
  return {
    admits: (principal) => isCheckCaller(principal, callers),
    requirement: checkCallersRequirement(callers),
  };
}

/**
 * The callers of the AuthZEN searches. A check answers one pair; a search enumerates who may use an item and
 * what a subject may use, so searches have callers of their own, none by default, and each searches within the
 * organisations it is bound to unless it is configured as platform-wide.
 */
export interface SearchCallers {
  /** A JWT or Basic application holding one of these searches within the organisations it is bound to. */
  roles: readonly string[];
  /** A JWT or Basic application holding one of these searches every organisation. */
  platformRoles: readonly string[];
  /** ServiceAccounts (bound to no organisation) that search every organisation, as `<namespace>:<name>`. */
  platformServiceAccounts: readonly string[];
}

export const SEARCH_CLIENT_ROLE = 'search_client';
export const PLATFORM_SEARCH_CLIENT_ROLE = 'platform_search_client';

export const DEFAULT_SEARCH_CALLERS: SearchCallers = {
  roles: [],
  platformRoles: [],
  platformServiceAccounts: [],
};

function isPlatformWide(principal: Principal, callers: SearchCallers): boolean {
  if (callers.platformRoles.some((role) => hasRole(principal, role))) return true;
  return (
    principal.serviceAccount !== undefined &&
    callers.platformServiceAccounts.includes(principal.serviceAccount)
  );
}

/**
 * What an enforcement point's evaluations may permit: every item for a platform-wide caller and for one bound
 * to no organisation (the check's callers as configured); only the items of its organisations for one bound to
 * some (a JWT's organisation claim, a Basic application's `organisations`).
 */
export function evaluationScope(principal: Principal, callers: SearchCallers): OrganisationScope {
  // Asked on every check: an unbound caller (the common one) is answered before any role or set is looked at,
  // and a bound caller's set is made once per principal (the verified-token cache hands back the same one).
  if (!isBound(principal) || isPlatformWide(principal, callers)) return 'every';
  let bound = boundSets.get(principal);
  if (bound === undefined) boundSets.set(principal, (bound = boundOrganisations(principal)));
  return bound;
}

const boundSets = new WeakMap<Principal, ReadonlySet<string>>();

/** Whether boundOrganisations(principal) is not empty. */
function isBound(principal: Principal): boolean {
  return principal.kind === 'application'
    ? (principal.organisations?.length ?? 0) > 0
    : principal.organisationId !== undefined;
}

/**
 * What a caller's searches may list; undefined when it may not search: it holds no search role, or only the
 * scoped one while bound to no organisation (platform-wide is configured, never inferred).
 */
export function searchScope(principal: Principal, callers: SearchCallers): OrganisationScope | undefined {
  if (isPlatformWide(principal, callers)) return 'every';
  if (!callers.roles.some((role) => hasRole(principal, role))) return undefined;
  const bound = boundOrganisations(principal);
  return bound.size > 0 ? bound : undefined;
}

/** The search routes' access rule; the 403 names the roles, not the ServiceAccounts. */
export function searchCallerRule(callers: SearchCallers): CallerRule {
  const scoped =
    callers.roles.length > 0
      ? `callers with the role ${callers.roles.join(' or ')} bound to organisations`
      : undefined;
  const platform =
    callers.platformRoles.length > 0
      ? `callers with the role ${callers.platformRoles.join(' or ')}`
      : undefined;
  const serviceAccounts =
    callers.platformServiceAccounts.length > 0 ? 'the listed ServiceAccounts' : undefined;
  const who =
    [scoped, platform, serviceAccounts].filter(Boolean).join(', ') || 'no caller (none is configured)';
  return {
    admits: (principal) => searchScope(principal, callers) !== undefined,
    requirement: `only enforcement points configured to search may search: ${who}`,
  };
}
