import { decodeJwt } from 'jose';
import type { Authenticators } from '../auth/middleware.js';
import type { BearerVerifier } from '../auth/verifiers.js';
import { cachedBearerVerifier } from './verified-token-cache.js';
import type { VerifiedTokenCacheOptions } from './verified-token-cache.js';

export interface ServiceAccountAuthentication {
  /** Verifies ServiceAccount tokens (TokenReview). */
  verifier: BearerVerifier;
  /** Issuers of the identity provider's JWTs: those tokens go to the JWT verifier, all others here. */
  jwtIssuers: readonly string[];
}

/**
 * The decision service's callers: the ACL API's JWT and Basic verifiers, optionally ServiceAccount tokens,
 * and a cache of verified bearer tokens in front of both bearer kinds. A token is sent to the JWT verifier
 * when its (unverified) `iss` is one of the identity provider's issuers, else to TokenReview; the claim only
 * picks the verifier, which then checks everything itself.
 */
export function decisionAuthenticators(
  authenticators: Authenticators,
  serviceAccounts?: ServiceAccountAuthentication,
  cache: VerifiedTokenCacheOptions = {},
): Authenticators {
  const bearer = serviceAccounts
    ? routeByIssuer(authenticators.bearer, serviceAccounts)
    : authenticators.bearer;
  return { ...authenticators, ...(bearer ? { bearer: cachedBearerVerifier(bearer, cache) } : {}) };
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
  };
}

function unverifiedIssuer(token: string): string | undefined {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}
