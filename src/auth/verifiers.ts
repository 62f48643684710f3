import type { Principal } from './principal.js';

/**
 * Verifies a bearer token. Throws AuthenticationError when the token is not accepted, and an HttpError of
 * kind DependencyUnavailable when the keys to check it cannot be fetched.
 */
export interface BearerVerifier {
  verify(token: string): Promise<Principal>;
}

/** Verifies HTTP Basic application credentials; throws AuthenticationError when they are not accepted. */
export interface BasicVerifier {
  verify(clientId: string, secret: string): Promise<Principal>;
}
