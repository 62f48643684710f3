import { beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthenticationError } from '../../../src/auth/authentication-error.js';
import { createBasicVerifier } from '../../../src/auth/basic-verifier.js';
import * as secretHash from '../../../src/auth/secret-hash.js';
import { VerifierBusyError } from '../../../src/auth/verifier-unavailable.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { ORG_ID, USER_ID } from './support/tokens.js';
import { FAST } from './support/fast-scrypt.js';
import type { ApplicationCredential } from '../../../src/auth/application-credentials.js';

vi.mock('../../../src/auth/secret-hash.js', async (importOriginal) => {
  const actual = await importOriginal<typeof secretHash>();
  return {
    ...actual,
    verifySecret: vi.fn(actual.verifySecret),
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

  it('sends unknown client ids through the same scrypt gate as wrong secrets, refused even with a real secret', async () => {
    const metricsRegistry = createMetricsRegistry();
    const verifier = createBasicVerifier(credentials, {
      scrypt: { concurrency: 1, queue: 1 },
      metricsRegistry,
    });
    vi.mocked(secretHash.verifySecret).mockClear();
    const outcomes = await Promise.allSettled([
      verifier.verify('gateway', 'wrong'),
      ...Array.from({ length: 3 }, (_, i) => verifier.verify(`nobody-${i}`, 'gateway-secret')),
    ]);
    const reasons = outcomes.map((outcome) => (outcome.status === 'rejected' ? outcome.reason : undefined));
    expect(reasons[0]).toBeInstanceOf(AuthenticationError);
    expect(reasons[1]).toBeInstanceOf(AuthenticationError);
    expect(reasons.slice(2)).toEqual([expect.any(VerifierBusyError), expect.any(VerifierBusyError)]);
    expect(secretHash.verifySecret).toHaveBeenCalledTimes(2);
    const metrics = await metricsRegistry.metrics();
    expect(metrics).toContain('policygrant_basic_auth_verifications_total{outcome="unknown_client"} 1');
    expect(metrics).toContain('policygrant_basic_auth_verifications_total{outcome="busy"} 2');
  });

  it('runs at most the bound of scrypt verifications, refusing past its queue as busy', async () => {
    const metricsRegistry = createMetricsRegistry();
    const verifier = createBasicVerifier(credentials, {
      scrypt: { concurrency: 1, queue: 1 },
      metricsRegistry,
    });
    vi.mocked(secretHash.verifySecret).mockClear();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => verifier.verify('gateway', `wrong-${i}`)),
    );
    const reasons = outcomes.map((outcome) => (outcome.status === 'rejected' ? outcome.reason : undefined));
    expect(reasons.filter((reason) => reason instanceof AuthenticationError)).toHaveLength(2);
    const busy = reasons.filter((reason) => reason instanceof VerifierBusyError);
    expect(busy).toHaveLength(3);
    expect(busy[0]).toMatchObject({ what: 'basic credential verification' });
    expect(secretHash.verifySecret).toHaveBeenCalledTimes(2);
    const metrics = await metricsRegistry.metrics();
    expect(metrics).toContain('policygrant_basic_auth_verifications_total{outcome="rejected"} 2');
    expect(metrics).toContain('policygrant_basic_auth_verifications_total{outcome="busy"} 3');
  });

  it('holds one address to a quarter of the scrypt places: made-up client ids from it leave room for another', async () => {
    const verifier = createBasicVerifier(credentials, { scrypt: { concurrency: 1, queue: 7 } });
    const flood = Array.from({ length: 6 }, (_, i) => verifier.verify(`made-up-${i}`, 'guess', '192.0.2.1'));
    const valid = verifier.verify('gateway', 'gateway-secret', '198.51.100.7');
    const outcomes = await Promise.allSettled(flood);
    const reasons = outcomes.map((outcome) => (outcome.status === 'rejected' ? outcome.reason : undefined));
    expect(reasons.filter((reason) => reason instanceof AuthenticationError)).toHaveLength(2);
    expect(reasons.filter((reason) => reason instanceof VerifierBusyError)).toHaveLength(4);
    expect(await valid).toMatchObject({ id: 'gateway' });
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
