import { decodeJwt } from 'jose';
import { AuthenticationError } from '../auth/authentication-error.js';
import type { BearerVerifier } from '../auth/verifiers.js';

/** A token's `iss` as it claims it, unverified; undefined for tokens that are not JWTs. */
export function unverifiedIssuer(token: string): string | undefined {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}

/**
 * Refuses, without verifying anything, bearer tokens whose (unverified) `iss` is none of `issuers`: a flood of
 * made-up tokens costs neither a TokenReview nor a place in the verified-token cache. The claim only decides
 * what is not worth verifying; the verifier behind checks every token it is given.
 */
export function knownIssuersOnly(verifier: BearerVerifier, issuers: readonly string[]): BearerVerifier {
  const known = new Set(issuers);
  return {
    verify(token, digest) {
      const issuer = unverifiedIssuer(token);
      if (issuer !== undefined && known.has(issuer)) return verifier.verify(token, digest);
      return Promise.reject(
        new AuthenticationError('invalid token', { cause: new Error('issuer is not accepted') }),
      );
    },
  };
}
