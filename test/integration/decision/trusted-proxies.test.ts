import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBasicVerifier } from '../../../src/auth/basic-verifier.js';
import { hashSecret } from '../../../src/auth/secret-hash.js';
import { parseTrustedProxies } from '../../../src/config/trusted-proxies.js';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { FAST } from '../../unit/auth/support/fast-scrypt.js';
import { requestFromAddress } from '../../support/http-from-address.js';
import { testSpiceDB } from '../support/cluster.js';
import { startServiceUnderTest, unknownUserCheck, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';

// The decision service behind one named proxy (TRUST_PROXY=127.0.0.9): a caller that reaches the port
// directly and sends X-Forwarded-For has no say over its client address.

const PROXY = '127.0.0.9';
const SPOOFER = '127.0.0.7';
const VICTIM = '127.0.0.8';
const FAILURES = { requests: 5, windowMs: 60_000 };
const SECRET = 'application-secret';
const check = unknownUserCheck('urn:dx:item:trusted-proxies');
let service: DecisionServiceUnderTest;

beforeAll(async () => {
  const hash = await hashSecret(SECRET, FAST);
  service = await startServiceUnderTest({
    spicedb: testSpiceDB(),
    basic: createBasicVerifier(
      ['gateway', 'other-app'].map((clientId) => ({ clientId, hash, roles: [DECISION_CLIENT_ROLE] })),
    ),
    limits: { perSubject: {}, failedAuthentication: FAILURES },
    trustProxy: parseTrustedProxies(PROXY),
  });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
});

const basic = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;

async function checkFrom(address: string, authorization: string, forwardedFor?: string): Promise<number> {
  const answer = await requestFromAddress(address, `${service.url}/v1/check`, {
    method: 'POST',
    headers: {
      authorization,
      'content-type': 'application/json',
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
    body: JSON.stringify(check),
  });
  return answer.status;
}

describe('X-Forwarded-For from a caller that is not the named proxy', () => {
  it('cannot lock another address out: the failures count against the sender, and the victim is answered', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 2 * FAILURES.requests; i++)
      answers.push(await checkFrom(SPOOFER, basic('gateway', `wrong-${i}`), VICTIM));
    expect(answers).toEqual([
      ...Array<number>(FAILURES.requests).fill(401),
      ...Array<number>(FAILURES.requests).fill(429),
    ]);
    expect(await checkFrom(VICTIM, basic('gateway', SECRET))).toBe(200);
  });

  it('cannot dodge the limit by rotating the header: 429 once its real address is past the limit', async () => {
    const rotating = '127.0.0.11';
    const answers: number[] = [];
    for (let i = 0; i < 2 * FAILURES.requests; i++)
      answers.push(await checkFrom(rotating, basic('other-app', `wrong-${i}`), `198.51.100.${i}`));
    expect(answers).toEqual([
      ...Array<number>(FAILURES.requests).fill(401),
      ...Array<number>(FAILURES.requests).fill(429),
    ]);
  });
});

describe('X-Forwarded-For from the named proxy', () => {
  it('names the client: one client behind the proxy locked out, another behind it still answered', async () => {
    const answers: number[] = [];
    for (let i = 0; i <= FAILURES.requests; i++)
      answers.push(await checkFrom(PROXY, basic('other-app', `wrong-${i}`), '203.0.113.1'));
    expect(answers.at(-1)).toBe(429);
    expect(await checkFrom(PROXY, basic('other-app', SECRET), '203.0.113.2')).toBe(200);
  });
});
