import { ensureDevSigningKey, type DevSigningKey } from '../../dev/tokens/dev-signing-key.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER } from '../../dev/tokens/dev-token.js';
import { createJwtVerifier } from '../../src/auth/jwt-verifier.js';
import type { BearerVerifier } from '../../src/auth/verifiers.js';

/** A development signing key in `stateDir` (mintToken signs with it) and a verifier of its tokens for a service. */
export async function devBearer(stateDir: string): Promise<{ key: DevSigningKey; bearer: BearerVerifier }> {
  const key = await ensureDevSigningKey(stateDir);
  const bearer = await createJwtVerifier({
    keys: { kind: 'jwks', jwks: key.jwks },
    issuer: DEV_TOKEN_ISSUER,
    audience: DEV_TOKEN_AUDIENCE,
  });
  return { key, bearer };
}
