import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PolicyGrant } from '../../../../src/api/v1alpha1/index.js';
import { AccessVerifier, type VerifyCache } from '../../../../src/acl/policies/verify-access.js';
import { DEFAULT_CHECK_CALLERS } from '../../../../src/decision/check-callers.js';
import type { Principal } from '../../../../src/auth/principal.js';
import { HttpError } from '../../../../src/http/errors.js';
import {
  catalogItem,
  groupFields,
  ITEM_ID,
  NOW,
  ORG_A,
  policyGrant,
  testCluster,
  USER,
} from '../../controller/support/fakes.js';

// Verify's own logic over a fake cache: which grants are the user's, which count (the verdict decides, see
// test/unit/verdict), GROUP grants through memberships, and the body's choice of the grant expiring last.

const user: Principal = { kind: 'user', id: USER, roles: new Set() };
const [ANOTHER_ORG, ANOTHER_USER] = [randomUUID(), randomUUID()];

function verifier(grants: PolicyGrant[], members: [string, string][] = []): AccessVerifier {
  const { cluster: view } = testCluster({
    grants,
    items: [catalogItem('weather', { accessTypes: ['api', 'file'] })],
  });
  const cache: VerifyCache = {
    aclNamespace: view.aclNamespace,
    registry: view.registry,
    itemsWithId: (itemId) => view.itemsWithId(itemId),
    organisationOfNamespace: (namespace) => view.organisationOfNamespace(namespace),
    grantsWithTupleKey: (key) => view.grantsWithTupleKey(key),
    grantsOfConsumer: (userId) => grants.filter((grant) => grant.spec.userId === userId),
    grantsOnItem: (itemId) => view.grantsOnItem(itemId),
    isOrganisationMember: (org, userId) => members.some(([o, u]) => o === org && u === userId),
  };
  return new AccessVerifier(cache, () => NOW, DEFAULT_CHECK_CALLERS);
}

function refusal(run: () => unknown): HttpError {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error('verify answered');
}

describe('verify', () => {
  it('answers the effective grant that expires last on top, and every effective grant in results', () => {
    const sooner = policyGrant('sooner', { expiryTime: '2030-01-01T00:00:00Z' });
    const later = policyGrant('later', {
      expiryTime: '2031-01-01T00:00:00+01:00',
      constraints: { access: [{ accessType: 'file' }] },
    });
    const verification = verifier([sooner, later]).verify(user, USER, ITEM_ID);
    expect(verification.latest).toEqual({
      id: 'uid-later',
      constraints: { access: [{ accessType: 'file' }] },
      expiryAt: '2030-12-31T23:00:00Z',
    });
    expect(verification.all.map((result) => result.id).sort()).toEqual(['uid-later', 'uid-sooner']);
  });

  it('leaves out grants the verdict refuses: the access type withdrawn from the item, another namespace', () => {
    const withdrawn = policyGrant('withdrawn', { constraints: { access: [{ accessType: 'sub' }] } });
    const elsewhere = policyGrant('elsewhere', {}, { namespace: 'unbound' });
    const error = refusal(() => verifier([withdrawn, elsewhere]).verify(user, USER, ITEM_ID));
    expect(error).toMatchObject({ status: 403, title: 'No active policy' });
  });

  it('counts a GROUP grant for a member of an allowed organisation only', () => {
    const grant = policyGrant('team', groupFields([ANOTHER_ORG, ORG_A]));
    expect(verifier([grant], [[ORG_A, USER]]).verify(user, USER, ITEM_ID).latest.id).toBe('uid-team');
    expect(refusal(() => verifier([grant], [[ORG_A, ANOTHER_USER]]).verify(user, USER, ITEM_ID)).status).toBe(
      403,
    );
  });

  it('refuses a caller who may not ask before it looks at grants', () => {
    const stranger: Principal = { kind: 'user', id: ANOTHER_USER, roles: new Set() };
    const error = refusal(() => verifier([policyGrant('g')]).verify(stranger, USER, ITEM_ID));
    expect(error).toMatchObject({ status: 403, title: 'Not allowed to verify' });
  });
});
