import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/http/errors.js';
import { assertBelowQuota, DEFAULT_USER_QUOTAS } from '../../../src/acl/user-quotas.js';

describe('assertBelowQuota', () => {
  const quotas = { ...DEFAULT_USER_QUOTAS, accessRequests: 2 };

  it('lets one more object in below the quota', () => {
    expect(() => assertBelowQuota(quotas, 'accessRequests', 1)).not.toThrow();
  });

  it('refuses at the quota with a 409 naming its variable and value', () => {
    let refusal: unknown;
    try {
      assertBelowQuota(quotas, 'accessRequests', 2);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(HttpError);
    expect(refusal).toMatchObject({ status: 409 });
    expect((refusal as HttpError).detail).toMatch(
      /^quota ACL_MAX_ACCESS_REQUESTS_PER_USER=2 reached: the caller holds 2 access requests/,
    );
  });
});
