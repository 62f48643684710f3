import { createHash, timingSafeEqual } from 'node:crypto';
import type { Registry as MetricsRegistry } from 'prom-client';
import { counter } from '../observability/metrics.js';
import type { ApplicationCredential } from './application-credentials.js';
import { AuthenticationError } from './authentication-error.js';
import { concurrencyGate, shareOf } from './concurrency-gate.js';
import type { ConcurrencyBound } from './concurrency-gate.js';
import type { BasicVerifier } from './verifiers.js';
import { boundRoles, type Principal } from './principal.js';
import { verifySecret } from './secret-hash.js';
import { VerifierBusyError } from './verifier-unavailable.js';

export interface BasicVerifierOptions {
  /** How long a verified secret is accepted without running scrypt again. */
  cacheTtlMs?: number;
  /**
   * Bound on scrypt verifications at once and waiting; past it, 503 with Retry-After. One client address holds
   * at most a quarter of its places (shareOf).
   */
  scrypt?: ConcurrencyBound;
  /** Where `policygrant_basic_auth_verifications_total{outcome}` is counted. */
  metricsRegistry?: MetricsRegistry;
  now?: () => number;
}

export const DEFAULT_BASIC_CACHE_TTL_MS = 5 * 60_000;
export const DEFAULT_SCRYPT_BOUND: ConcurrencyBound = { concurrency: 1, queue: 16 };

type Outcome = 'accepted' | 'rejected' | 'unknown_client' | 'busy';

/**
 * Verifies client id and secret against scrypt hashes, at most `scrypt.concurrency` at once so that a flood
 * of wrong secrets leaves the libuv pool to everything else (JWT signatures, TLS). An unknown client id takes
 * the same path as a wrong secret: it waits in the same gate and runs scrypt against a configured credential's
 * hash (same parameters), and is refused whatever that gives, so neither timing nor queueing nor a busy 503
 * tells which client ids exist. Its cost is bounded like a wrong secret's: by the gate and by the failed-
 * authentication limit per address. One client address holds at most its share of the gate (running and
 * waiting), past which its attempts are busy at once: a flood of made-up client ids from one address, each
 * new to the limits, cannot keep the queue full for the valid callers of other addresses. A successful
 * verification is remembered as the secret's SHA-256 for a few minutes: scrypt on every request would cap
 * throughput at a few dozen requests per second per core.
 */
export function createBasicVerifier(
  credentials: readonly ApplicationCredential[],
  options: BasicVerifierOptions = {},
): BasicVerifier {
  const byClientId = new Map(credentials.map((credential) => [credential.clientId, credential]));
  const recentlyVerified = new Map<string, { digest: Buffer; expiresAt: number }>();
  const now = options.now ?? Date.now;
  const ttlMs = options.cacheTtlMs ?? DEFAULT_BASIC_CACHE_TTL_MS;
  const count = outcomeCounter(options.metricsRegistry);
  const bound = options.scrypt ?? DEFAULT_SCRYPT_BOUND;
  const gate = concurrencyGate(
    bound,
    () => {
      count('busy');
      return new VerifierBusyError('basic credential verification');
    },
    shareOf(bound),
  );
  const checkSecret = (secret: string, hash: string, address: string | undefined) =>
    gate(() => verifySecret(secret, hash), address);
  const decoyHash = credentials[0]?.hash;

  const wasRecentlyVerified = (clientId: string, digest: Buffer): boolean => {
    const entry = recentlyVerified.get(clientId);
    return entry !== undefined && entry.expiresAt > now() && timingSafeEqual(entry.digest, digest);
  };

  return {
    async verify(clientId, secret, address) {
      const credential = byClientId.get(clientId);
      if (!credential) {
        if (decoyHash) await checkSecret(secret, decoyHash, address);
        count('unknown_client');
        throw new AuthenticationError('invalid credentials', { cause: new Error('unknown client id') });
      }
      const digest = createHash('sha256').update(secret).digest();
      if (!wasRecentlyVerified(clientId, digest)) {
        const accepted = await checkSecret(secret, credential.hash, address);
        count(accepted ? 'accepted' : 'rejected');
        if (!accepted) {
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

/** `policygrant_basic_auth_verifications_total{outcome}`: scrypt ran for all but `busy`. */
function outcomeCounter(registry: MetricsRegistry | undefined): (outcome: Outcome) => void {
  if (!registry) return () => undefined;
  const verifications = counter(registry, {
    name: 'basic_auth_verifications_total',
    help:
      'Basic credentials verified, by outcome: accepted, rejected and unknown_client (against a decoy hash) ' +
      'ran scrypt; busy (the scrypt queue was full) did not.',
    labelNames: ['outcome'],
  });
  return (outcome) => verifications.inc({ outcome });
}

function applicationPrincipal(credential: ApplicationCredential): Principal {
  return {
    kind: 'application',
    id: credential.userId ?? credential.clientId,
    clientId: credential.clientId,
    roles: boundRoles(credential.roles, credential.organisationId),
    ...(credential.organisationId === undefined ? {} : { organisationId: credential.organisationId }),
    ...(credential.organisations === undefined ? {} : { organisations: credential.organisations }),
  };
}
