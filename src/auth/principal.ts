export type PrincipalKind = 'user' | 'application';

/** The authenticated caller. */
export interface Principal {
  readonly kind: PrincipalKind;
  /**
   * Who the request acts for: a user's `sub` (a UUID). For an application it is the user id its credential
   * entry names, or else its client id (not a UUID, so it never matches an owner or issuer).
   */
  readonly id: string;
  readonly roles: ReadonlySet<string>;
  readonly organisationId?: string;
  /** Applications only: the organisations the credential is bound to (boundOrganisations). */
  readonly organisations?: readonly string[];
  /** Applications only: the client id of the Basic credential. */
  readonly clientId?: string;
  /** ServiceAccounts verified by TokenReview only: `<namespace>:<name>`. */
  readonly serviceAccount?: string;
}

/** The role that administers an organisation: only together with the organisation it names. */
export const ORG_ADMIN = 'org_admin';

/**
 * The roles a credential holds: `org_admin` only with an organisation (a JWT's organisation claim, a Basic
 * credential's organisationId). Without one it administers nothing, so it is dropped here, once, rather than
 * checked again at every place that asks for the role.
 */
export function boundRoles(roles: Iterable<string>, organisationId: string | undefined): ReadonlySet<string> {
  const held = new Set(roles);
  if (organisationId === undefined) held.delete(ORG_ADMIN);
  return held;
}

/**
 * The organisations a credential is bound to: a JWT's organisation claim, a Basic application's `organisations`.
 * What an event producer may report memberships for, and what an enforcement point bound to organisations may
 * decide and search about.
 */
export function boundOrganisations(principal: Principal): ReadonlySet<string> {
  if (principal.kind === 'application') return new Set(principal.organisations ?? []);
  return new Set(principal.organisationId === undefined ? [] : [principal.organisationId]);
}

export function hasRole(principal: Principal, role: string): boolean {
  return principal.roles.has(role);
}
