import { beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthenticationError } from '../../../src/auth/authentication-error.js';
import { createBasicVerifier } from '../../../src/auth/basic-verifier.js';
import * as secretHash from '../../../src/auth/secret-hash.js';
import { ORG_ID, USER_ID } from './support/tokens.js';
import { FAST } from './support/fast-scrypt.js';
import type { ApplicationCredential } from '../../../src/auth/application-credentials.js';

vi.mock('../../../src/auth/secret-hash.js', async (importOriginal) => {
  const actual = await importOriginal<typeof secretHash>();
  return {
    ...actual,
    verifySecret: vi.fn(actual.verifySecret),
    // The decoy hash of unknown clients is made with the cheap parameters too.
    hashSecret: vi.fn((secret: string) => actual.hashSecret(secret, FAST)),
  };
});

let credentials: ApplicationCredential[];

beforeAll(async () => {
  credentials = [
    { clientId: 'gateway', hash: await secretHash.hashSecret('gateway-secret', FAST), roles: ['cos_admin'] },
    {
      clientId: 'marketplace',
      hash: await secretHash.hashSecret('market-secret', FAST),
      roles: [],
      userId: USER_ID,
      organisationId: ORG_ID,
    },
  ];
});

describe('createBasicVerifier', () => {
  it('accepts the right secret as an application principal', async () => {
    const verifier = createBasicVerifier(credentials);
    expect(await verifier.verify('gateway', 'gateway-secret')).toEqual({
      kind: 'application',
      id: 'gateway',
      clientId: 'gateway',
      roles: new Set(['cos_admin']),
    });
  });

  it('acts for the configured user and organisation', async () => {
    const verifier = createBasicVerifier(credentials);
    expect(await verifier.verify('marketplace', 'market-secret')).toMatchObject({
      kind: 'application',
      id: USER_ID,
      clientId: 'marketplace',
      organisationId: ORG_ID,
    });
  });

  it('rejects a wrong secret', async () => {
    const verifier = createBasicVerifier(credentials);
    await expect(verifier.verify('gateway', 'market-secret')).rejects.toEqual(
      new AuthenticationError('invalid credentials'),
    );
  });

  it('rejects an unknown client after the same scrypt work as a known one', async () => {
    const verifier = createBasicVerifier(credentials);
    vi.mocked(secretHash.verifySecret).mockClear();
    await expect(verifier.verify('nobody', 'gateway-secret')).rejects.toBeInstanceOf(AuthenticationError);
    expect(secretHash.verifySecret).toHaveBeenCalledTimes(1);
  });

  it('skips scrypt for a recently verified secret, but not for another one', async () => {
    let now = 1_000;
    const verifier = createBasicVerifier(credentials, { cacheTtlMs: 100, now: () => now });
    vi.mocked(secretHash.verifySecret).mockClear();
    await verifier.verify('gateway', 'gateway-secret');
    await verifier.verify('gateway', 'gateway-secret');
    expect(secretHash.verifySecret).toHaveBeenCalledTimes(1);
    await expect(verifier.verify('gateway', 'gateway-secret-2')).rejects.toBeInstanceOf(AuthenticationError);
    expect(secretHash.verifySecret).toHaveBeenCalledTimes(2);
    now += 101;
    await verifier.verify('gateway', 'gateway-secret');
    expect(secretHash.verifySecret).toHaveBeenCalledTimes(3);
  });
});
