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
  /** Applications only: the client id of the Basic credential. */
  readonly clientId?: string;
  /** ServiceAccounts verified by TokenReview only: `<namespace>:<name>`. */
  readonly serviceAccount?: string;
}

export function hasRole(principal: Principal, role: string): boolean {
  return principal.roles.has(role);
}
