import type { Authenticators, BearerVerifier } from '../auth/verifiers.js';
import { knownIssuersOnly, unverifiedIssuer } from './token-issuers.js';
import { cachedBearerVerifier } from '../auth/verified-token-cache.js';
import type { VerifiedTokenCacheOptions } from '../auth/verified-token-cache.js';

export interface ServiceAccountAuthentication {
  /** Verifies ServiceAccount tokens (TokenReview). */
  verifier: BearerVerifier;
  /** Issuers of the identity provider's JWTs: those tokens go to the JWT verifier, all others here. */
  jwtIssuers: readonly string[];
  /** The API server's ServiceAccount token issuers: tokens of neither kind are refused without TokenReview. */
  serviceAccountIssuers: readonly string[];
}

/**
 * The decision service's callers: the ACL API's JWT and Basic verifiers, optionally ServiceAccount tokens,
 * and a cache of verified bearer tokens in front of both bearer kinds. A token is sent to the JWT verifier
 * when its (unverified) `iss` is one of the identity provider's issuers, to TokenReview when it is one of
 * the ServiceAccount issuers, and refused unverified otherwise; the claim only picks the verifier, which then
 * checks everything itself.
 */
export function decisionAuthenticators(
  authenticators: Authenticators,
  serviceAccounts?: ServiceAccountAuthentication,
  cache: VerifiedTokenCacheOptions = {},
): Authenticators {
  const bearer = serviceAccounts
    ? routeByIssuer(authenticators.bearer, serviceAccounts)
    : authenticators.bearer;
  if (!bearer) return authenticators;
  const cached = cachedBearerVerifier(bearer, cache);
  if (!serviceAccounts) return { ...authenticators, bearer: cached };
  const issuers = [...serviceAccounts.jwtIssuers, ...serviceAccounts.serviceAccountIssuers];
  return { ...authenticators, bearer: knownIssuersOnly(cached, issuers) };
}

function routeByIssuer(
  jwt: BearerVerifier | undefined,
  { verifier, jwtIssuers }: ServiceAccountAuthentication,
): BearerVerifier {
  if (!jwt) return verifier;
  const issuers = new Set(jwtIssuers);
  return {
    verify(token) {
      const issuer = unverifiedIssuer(token);
      return (issuer !== undefined && issuers.has(issuer) ? jwt : verifier).verify(token);
    },
    ...(jwt.keysVersion ? { keysVersion: () => jwt.keysVersion?.() ?? 0 } : {}),
  };
}
