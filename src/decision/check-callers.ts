import { hasRole } from '../auth/principal.js';
import type { Principal } from '../auth/principal.js';
import { DECISION_CLIENT_ROLE } from '../config/decision-clients.js';
import type { CallerRule } from '../http/openapi/route-definition.js';

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
