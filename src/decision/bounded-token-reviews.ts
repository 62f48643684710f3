import { concurrencyGate } from '../auth/concurrency-gate.js';
import type { ConcurrencyBound } from '../auth/concurrency-gate.js';
import type { BearerVerifier } from '../auth/verifiers.js';
import { busy } from '../http/errors.js';

export const DEFAULT_TOKEN_REVIEW_BOUND: ConcurrencyBound = { concurrency: 4, queue: 64 };

/** At most `bound.concurrency` TokenReviews in flight and `bound.queue` waiting; past it, 503 (not cached). */
export function boundedTokenReviews(verifier: BearerVerifier, bound: ConcurrencyBound): BearerVerifier {
  const gate = concurrencyGate(bound, () => busy('kubernetes TokenReview'));
  return { verify: (token) => gate(() => verifier.verify(token)) };
}
