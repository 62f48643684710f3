import { describe, expect, it } from 'vitest';
import { AuthenticationError } from '../../../src/auth/authentication-error.js';
import type { Principal } from '../../../src/auth/principal.js';
import type { BearerVerifier } from '../../../src/auth/verifiers.js';
import { boundedTokenReviews } from '../../../src/decision/bounded-token-reviews.js';
import { cachedBearerVerifier } from '../../../src/auth/verified-token-cache.js';
import { HttpError } from '../../../src/http/errors.js';

const serviceAccount: Principal = { kind: 'application', id: 'system:serviceaccount:a:b', roles: new Set() };

describe('boundedTokenReviews', () => {
  it('keeps at most concurrency + queue TokenReviews in flight; the rest get 503 and are not cached', async () => {
    let release!: () => void;
    const answered = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reviewed: string[] = [];
    const reviews: BearerVerifier = {
      async verify(token) {
        reviewed.push(token);
        await answered;
        if (token.startsWith('bad')) throw new AuthenticationError('invalid token');
        return serviceAccount;
      },
    };
    const verifier = cachedBearerVerifier(boundedTokenReviews(reviews, { concurrency: 1, queue: 1 }));
    const flood = Array.from({ length: 6 }, (_, i) => verifier.verify(`bad-${i}`));
    const outcomes = Promise.allSettled(flood);
    release();
    const reasons = (await outcomes).map((outcome) =>
      outcome.status === 'rejected' ? outcome.reason : undefined,
    );
    expect(reasons.filter((reason) => reason instanceof AuthenticationError)).toHaveLength(2);
    const busy = reasons.filter((reason) => reason instanceof HttpError);
    expect(busy).toHaveLength(4);
    expect(busy[0]).toMatchObject({ status: 503, headers: { 'retry-after': '1' } });
    expect(reviewed).toEqual(['bad-0', 'bad-1']);
    // A refusal for being busy is no verdict on the token: it is reviewed when asked again.
    await expect(verifier.verify('bad-5')).rejects.toBeInstanceOf(AuthenticationError);
    expect(reviewed).toEqual(['bad-0', 'bad-1', 'bad-5']);
    // A failed review is remembered: no second TokenReview for the same token within the rejection TTL.
    await expect(verifier.verify('bad-0')).rejects.toBeInstanceOf(AuthenticationError);
    expect(reviewed).toHaveLength(3);
  });
});
