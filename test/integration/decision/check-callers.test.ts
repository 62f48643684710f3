import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBasicVerifier } from '../../../src/auth/basic-verifier.js';
import { hashSecret } from '../../../src/auth/secret-hash.js';
import { tokenReviewApi } from '../../../src/auth/token-review-verifier.js';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { DEFAULT_TOKEN_REVIEW_AUDIENCE } from '../../../src/decision/decision-service.js';
import { FAST } from '../../unit/auth/support/fast-scrypt.js';
import {
  AclHarness,
  BASIC_SECRET,
  ENFORCER_CLIENT_ID,
  PRODUCER_CLIENT_ID,
  individual,
} from '../acl/support/acl-harness.js';
import { signToken } from '../../unit/auth/support/tokens.js';
import { createTestNamespace, testKubeConfig, testSpiceDB } from '../support/cluster.js';
import { ISSUER, startServiceUnderTest, unknownUserCheck, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';
import { createServiceAccount, serviceAccountToken } from './support/service-accounts.js';

// Who may call /v1/check, against the real services: the decision service with its defaults (the role
// decision_client; TokenReview for its own audience) reviewing real ServiceAccount tokens with the shared
// kube-apiserver, and Basic applications with and without the role. POST /verify of the ACL API is the same
// oracle through another route: the same enforcement points may ask it about any user.

const ENFORCER = 'enforcer';
const BYSTANDER = 'bystander';
const SECRET = 'application-secret';
let service: DecisionServiceUnderTest;
let namespace: string;

beforeAll(async () => {
  namespace = await createTestNamespace('decision-check-callers');
  await createServiceAccount(namespace, ENFORCER);
  await createServiceAccount(namespace, BYSTANDER);
  const hash = await hashSecret(SECRET, FAST);
  service = await startServiceUnderTest({
    spicedb: testSpiceDB(),
    basic: createBasicVerifier([
      { clientId: 'gateway', hash, roles: [DECISION_CLIENT_ROLE] },
      { clientId: 'reporting', hash, roles: ['org_admin'] },
    ]),
    // No audiences: the service's default.
    tokenReview: { api: tokenReviewApi(testKubeConfig()), jwtIssuers: [ISSUER] },
    checkCallers: { roles: [DECISION_CLIENT_ROLE], serviceAccounts: [`${namespace}:${ENFORCER}`] },
  });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
});

const check = unknownUserCheck('urn:dx:item:check-callers');

const bearer = (token: string) => `Bearer ${token}`;
const basic = (clientId: string) => `Basic ${Buffer.from(`${clientId}:${SECRET}`).toString('base64')}`;
const jwt = async (roles: string[]) => bearer(await signToken(service.key, { roles }, { expiresIn: 600 }));
const serviceAccount = async (name: string, audiences?: string[]) =>
  bearer(await serviceAccountToken(namespace, name, audiences));

/** Every caller of the matrix, with the status it must get. */
async function callers(): Promise<Array<[string, string, number]>> {
  return [
    ['an end-user JWT without roles', await jwt([]), 403],
    ['an org_admin JWT', await jwt(['org_admin']), 403],
    ['a cos_admin JWT', await jwt(['cos_admin']), 403],
    ['a JWT with decision_client', await jwt([DECISION_CLIENT_ROLE]), 200],
    [
      'the listed ServiceAccount, for the service’s audience',
      await serviceAccount(ENFORCER, [DEFAULT_TOKEN_REVIEW_AUDIENCE]),
      200,
    ],
    [
      'an unlisted ServiceAccount, for the service’s audience',
      await serviceAccount(BYSTANDER, [DEFAULT_TOKEN_REVIEW_AUDIENCE]),
      403,
    ],
    ['the listed ServiceAccount, for the API server’s audience', await serviceAccount(ENFORCER), 401],
    ['a Basic application with decision_client', basic('gateway'), 200],
    ['a Basic application without it', basic('reporting'), 403],
  ];
}

describe('only enforcement points may call /v1/check', () => {
  it('answers each caller as its kind and configuration say', async () => {
    const answers = [];
    for (const [who, authorization, expected] of await callers()) {
      const { status } = await service.check(check, { authorization });
      answers.push([who, status, expected]);
    }
    expect(answers.filter(([, status, expected]) => status !== expected)).toEqual([]);
  });

  it('a 403 is a deny in the envelope that says who may check', async () => {
    const { status, body } = await service.check(check, { authorization: await jwt([]) });
    expect(status).toBe(403);
    expect(body).toEqual({
      type: 'urn:dx:authz:Forbidden',
      title: 'Forbidden',
      detail:
        'only enforcement points may call the check: callers with the role decision_client and the listed ServiceAccounts',
      result: { allowed: false },
    });
  });

  it('a token for the API server is a 401, even from a listed ServiceAccount', async () => {
    const { status, body } = await service.check(check, { authorization: await serviceAccount(ENFORCER) });
    expect(status).toBe(401);
    expect(body).toMatchObject({ type: 'urn:dx:authz:Unauthorized', result: { allowed: false } });
  });

  it('logs who was refused, and neither logs nor metrics carry a token or secret of any caller', async () => {
    const presented = await callers();
    for (const [, authorization] of presented) await service.check(check, { authorization });
    const logs = service.logs();
    const metrics = await service.metrics.metrics();
    expect(logs).toContain(`"caller":"system:serviceaccount:${namespace}:${BYSTANDER}"`);
    expect(metrics).toMatch(/policygrant_http_requests_total\{[^}]*route="\/v1\/check",code="403"\} [1-9]/);
    const credentials = presented.map(([, authorization]) => authorization.split(' ')[1] as string);
    for (const credential of [...credentials, SECRET])
      expect(`${logs}\n${metrics}`).not.toContain(credential);
  });
});

describe('POST /verify answers the same enforcement points about any user', () => {
  const acl = new AclHarness();
  let itemId: string;
  let consumerId: string;

  beforeAll(async () => {
    await acl.start('verify-callers');
    const owner = await acl.user({ org: randomUUID() });
    itemId = (await acl.catalogItem({ ownerId: owner.id, organisationId: randomUUID() })).spec.itemId;
    consumerId = randomUUID();
    const granted = await acl.request('POST', '/policy', {
      caller: owner,
      body: { request: [individual(itemId, consumerId)] },
    });
    expect(granted.status).toBe(201);
  });

  afterAll(() => acl.stop());

  it('answers each caller as its kind and roles say', async () => {
    const matrix: Array<[string, string, number]> = [
      ['an end-user JWT without roles', (await acl.user()).authorization, 403],
      [
        'an org_admin JWT of another organisation',
        (await acl.user({ roles: ['org_admin'], org: randomUUID() })).authorization,
        403,
      ],
      ['a JWT with decision_client', (await acl.user({ roles: [DECISION_CLIENT_ROLE] })).authorization, 200],
      [
        'a Basic application with decision_client',
        acl.basicCaller(BASIC_SECRET, ENFORCER_CLIENT_ID).authorization,
        200,
      ],
      ['a Basic application without roles', acl.basicCaller().authorization, 403],
      [
        'a Basic application with another role',
        acl.basicCaller(BASIC_SECRET, PRODUCER_CLIENT_ID).authorization,
        403,
      ],
    ];
    const answers = [];
    for (const [who, authorization, expected] of matrix) {
      const { status, body } = await acl.request('POST', '/verify', {
        caller: { id: who, authorization },
        body: { user: { id: consumerId }, item: { itemId } },
      });
      answers.push([who, status, expected, body.title]);
    }
    expect(answers.filter(([, status, expected]) => status !== expected)).toEqual([]);
    expect(answers.filter(([, status]) => status === 403).map(([, , , title]) => title)).toEqual(
      Array(4).fill('Not allowed to verify'),
    );
  });
});
