import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApplicationCredential } from './application-credentials.js';
import { AuthenticationError } from './authentication-error.js';
import type { BasicVerifier } from './verifiers.js';
import type { Principal } from './principal.js';
import { hashSecret, verifySecret } from './secret-hash.js';

export interface BasicVerifierOptions {
  /** How long a verified secret is accepted without running scrypt again. */
  cacheTtlMs?: number;
  now?: () => number;
}

export const DEFAULT_BASIC_CACHE_TTL_MS = 5 * 60_000;

/**
 * Verifies client id and secret against scrypt hashes. An unknown client costs one scrypt run too, so timing
 * does not tell which client ids exist. A successful verification is remembered as the secret's SHA-256 for a
 * few minutes: scrypt on every request would cap throughput at a few dozen requests per second per core.
 */
export function createBasicVerifier(
  credentials: readonly ApplicationCredential[],
  options: BasicVerifierOptions = {},
): BasicVerifier {
  const byClientId = new Map(credentials.map((credential) => [credential.clientId, credential]));
  const recentlyVerified = new Map<string, { digest: Buffer; expiresAt: number }>();
  const now = options.now ?? Date.now;
  const ttlMs = options.cacheTtlMs ?? DEFAULT_BASIC_CACHE_TTL_MS;
  let decoyHash: Promise<string> | undefined;

  const wasRecentlyVerified = (clientId: string, digest: Buffer): boolean => {
    const entry = recentlyVerified.get(clientId);
    return entry !== undefined && entry.expiresAt > now() && timingSafeEqual(entry.digest, digest);
  };

  return {
    async verify(clientId, secret) {
      const credential = byClientId.get(clientId);
      if (!credential) {
        decoyHash ??= hashSecret('decoy');
        await verifySecret(secret, await decoyHash);
        throw new AuthenticationError('invalid credentials', { cause: new Error('unknown client id') });
      }
      const digest = createHash('sha256').update(secret).digest();
      if (!wasRecentlyVerified(clientId, digest)) {
        if (!(await verifySecret(secret, credential.hash))) {
          throw new AuthenticationError('invalid credentials', {
            cause: new Error(`wrong secret for ${clientId}`),
          });
        }
        recentlyVerified.set(clientId, { digest, expiresAt: now() + ttlMs });
      }
      return applicationPrincipal(credential);
    },
  };
}

function applicationPrincipal(credential: ApplicationCredential): Principal {
  return {
    kind: 'application',
    id: credential.userId ?? credential.clientId,
    clientId: credential.clientId,
    roles: new Set(credential.roles),
    ...(credential.organisationId === undefined ? {} : { organisationId: credential.organisationId }),
  };
}
