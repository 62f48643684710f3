import type { V1TokenReview } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { AuthenticationError } from '../../../src/auth/authentication-error.js';
import { createTokenReviewVerifier } from '../../../src/auth/token-review-verifier.js';
import type { TokenReviewApi } from '../../../src/auth/token-review-verifier.js';
import { VerifierUnavailableError } from '../../../src/auth/verifier-unavailable.js';

function fakeApi(status: V1TokenReview['status'] | (() => Promise<never>)) {
  const requests: V1TokenReview[] = [];
  const api: TokenReviewApi = {
    async createTokenReview({ body }) {
      requests.push(body);
      if (typeof status === 'function') return status();
      return { ...body, status };
    },
  };
  return { api, requests };
}

const reader = { authenticated: true, user: { username: 'system:serviceaccount:apps:reader' } };

describe('createTokenReviewVerifier', () => {
  it('accepts an authenticated ServiceAccount as an application principal', async () => {
    const { api, requests } = fakeApi({ ...reader, audiences: ['decision'] });
    const principal = await createTokenReviewVerifier({ api, audiences: ['decision'] }).verify('sa-token');
    expect(principal).toEqual({
      kind: 'application',
      id: 'system:serviceaccount:apps:reader',
      clientId: 'system:serviceaccount:apps:reader',
      roles: new Set(),
      serviceAccount: 'apps:reader',
    });
    expect(requests[0]?.spec).toEqual({ token: 'sa-token', audiences: ['decision'] });
  });

  it.each([
    ['not authenticated', { authenticated: false, error: 'invalid bearer token' }],
    ['not a ServiceAccount', { authenticated: true, user: { username: 'kubernetes-admin' } }],
    ['reviewed for another audience', { ...reader, audiences: ['kubernetes'] }],
  ])('rejects a token %s', async (_case, status) => {
    const { api } = fakeApi(status);
    await expect(
      createTokenReviewVerifier({ api, audiences: ['decision'] }).verify('t'),
    ).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('refuses to review without an audience: the API server would accept its own tokens', () => {
    const { api, requests } = fakeApi(reader);
    expect(() => createTokenReviewVerifier({ api, audiences: [] })).toThrow('at least one audience');
    expect(requests).toEqual([]);
  });

  // The slow API server never answers: only the review's own timeout ends the wait (else the test times out).
  it('is unavailable naming kubernetes when the API server fails or is too slow', async () => {
    const failing = fakeApi(() => Promise.reject(new Error('ECONNREFUSED')));
    const slow = fakeApi(() => new Promise<never>(() => {}));
    for (const { api } of [failing, slow]) {
      const error = await createTokenReviewVerifier({ api, audiences: ['decision'], timeoutMs: 100 })
        .verify('t')
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(VerifierUnavailableError);
      expect(error).toMatchObject({ dependency: 'kubernetes', message: 'kubernetes is unavailable' });
    }
  });
});
