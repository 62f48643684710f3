import type { Principal } from './principal.js';

/**
 * Verifies a bearer token. Throws AuthenticationError when the token is not accepted, and VerifierUnavailableError
 * when the keys to check it (or the TokenReview API) cannot be reached.
 */
export interface BearerVerifier {
  /**
   * `digest`: the token's tokenDigest when the caller computed it already (the failed-authentication limit
   * does, for every request); a cache of verified tokens keys on it rather than hashing the token again.
   */
  verify(token: string, digest?: string): Promise<Principal>;
  /**
   * Changes whenever the keys do (a reloaded JWKS file): a cache of verified tokens verifies again what it
   * verified with other keys, so that a removed key is refused at once. Absent: the keys never change here.
   */
  keysVersion?(): number;
}

/** Verifies HTTP Basic application credentials; throws AuthenticationError when they are not accepted. */
export interface BasicVerifier {
  /** `address`: the client address the attempt comes from (clientAddress), whose share of the work it takes. */
  verify(clientId: string, secret: string, address?: string): Promise<Principal>;
}

/** The verifiers a service accepts credentials with. */
export interface Authenticators {
  bearer?: BearerVerifier;
  basic?: BasicVerifier;
  /** Realm of the WWW-Authenticate challenges. */
  realm?: string;
}
