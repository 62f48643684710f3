import { describe, expect, it } from 'vitest';
import type {
  Agent,
  Condition,
  Delegation,
  Membership,
  PolicyGrant,
} from '../../../src/api/v1alpha1/index.js';
import { evaluateGrant } from '../../../src/verdict/grant-verdict.js';
import type { ExplainReason } from '../../../src/verdict/explanation.js';
import { explain, type Explanation } from '../../../src/verdict/explanation.js';
import type { ClusterLister } from '../../../src/verdict/cluster-lister.js';
import { listerOf, NO_OBJECTS, type ListedObjects } from '../../../src/kubectl-grants/listed-objects.js';
import {
  ACL_NAMESPACE,
  boundNamespace,
  catalogItem,
  groupFields,
  ITEM_ID,
  membership,
  NOW,
  ORG_A,
  ORG_B,
  OTHER_USER,
  policyGrant,
  registry,
  USER,
} from '../controller/support/fakes.js';

const AGENT_ID = 'agent-7';

function viewOf(objects: Partial<ListedObjects>): ClusterLister {
  return listerOf({ ...NO_OBJECTS, items: [catalogItem('weather')], ...objects }, ACL_NAMESPACE, registry);
}

function explainUser(objects: Partial<ListedObjects>, userId = USER, accessType = 'api'): Explanation {
  return explain(
    { subject: { type: 'user', id: userId }, itemId: ITEM_ID, accessType },
    viewOf(objects),
    NOW,
  );
}

function enforced(status: Condition['status'], observedGeneration = 1): { conditions: Condition[] } {
  const reason = status === 'True' ? 'Projected' : 'Revoked';
  const condition = { type: 'Enforced', status, reason, message: '', observedGeneration };
  return { conditions: [{ ...condition, lastTransitionTime: '2026-01-01T00:00:00Z' }] };
}

function grantsOf(explanation: Explanation) {
  return explanation.objects.filter((object) => object.kind === 'PolicyGrant');
}

function reasonOfGrant(grant: PolicyGrant, objects: Partial<ListedObjects>): string | undefined {
  return grantsOf(explainUser({ grants: [grant], ...objects })).find((object) =>
    object.ref.endsWith(grant.metadata.name ?? ''),
  )?.reason;
}

function delegation(name: string, spec: Partial<Delegation['spec']> = {}): Delegation {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'Delegation',
    metadata: { name, namespace: ACL_NAMESPACE, generation: 1 },
    spec: {
      agentId: AGENT_ID,
      ownerId: USER,
      itemId: ITEM_ID,
      relation: 'querier',
      expiryTime: '2099-01-01T00:00:00Z',
      ...spec,
    },
  };
}

function agent(ownerId = USER): Agent {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'Agent',
    metadata: { name: 'agent', namespace: ACL_NAMESPACE },
    spec: { agentId: AGENT_ID, ownerId },
  };
}

describe('the explanation of one access', () => {
  it('allows through an effective INDIVIDUAL grant, naming it with its policy id', () => {
    const grant = policyGrant('g', {}, {}, { ...enforced('True') });
    const explanation = explainUser({ grants: [grant] });
    expect(explanation).toMatchObject({
      allowed: true,
      enforced: true,
      message: 'allowed by PolicyGrant policy-grant-system/g',
    });
    expect(explanation.disagreement).toBeUndefined();
    expect(explanation.objects).toEqual([
      expect.objectContaining({ kind: 'CatalogItem', ref: 'weather', reason: 'Effective' }),
      expect.objectContaining({
        kind: 'PolicyGrant',
        ref: `${ACL_NAMESPACE}/g`,
        policyId: 'uid-g',
        effective: true,
        reason: 'Effective',
        enforcement: expect.objectContaining({ status: 'True', current: true }),
      }),
    ]);
  });

  // One case per cause of a withheld grant; each agrees with the verdict the controller enforces.
  const withheld: { reason: ExplainReason; grant: PolicyGrant; objects?: Partial<ListedObjects> }[] = [
    { reason: 'Revoked', grant: policyGrant('g', { revokedAt: '2026-05-01T00:00:00Z' }) },
    { reason: 'Expired', grant: policyGrant('g', { expiryTime: '2026-05-01T00:00:00Z' }) },
    { reason: 'NamespaceNotBound', grant: policyGrant('g', {}, { namespace: 'team' }) },
    {
      reason: 'NamespaceBoundToAnotherOrganisation',
      grant: policyGrant('g', {}, { namespace: 'team' }),
      objects: { namespaces: [boundNamespace('team', ORG_B)] },
    },
    { reason: 'ItemMissing', grant: policyGrant('g'), objects: { items: [] } },
    {
      reason: 'ItemAmbiguous',
      grant: policyGrant('g'),
      objects: { items: [catalogItem('a'), catalogItem('b')] },
    },
    {
      reason: 'ItemOfAnotherType',
      grant: policyGrant('g'),
      objects: { items: [catalogItem('x', { itemType: 'DATASET' })] },
    },
    {
      reason: 'AccessTypeWithdrawn',
      grant: policyGrant('g'),
      objects: { items: [catalogItem('x', { accessTypes: ['file'] })] },
    },
    {
      reason: 'NotProjectable',
      grant: policyGrant('g', { itemType: 'DATASET' }),
      objects: { items: [catalogItem('x', { itemType: 'DATASET' })] },
    },
  ];
  for (const { reason, grant, objects = {} } of withheld) {
    it(`denies with a grant whose cause is ${reason}, as the verdict withholds it`, () => {
      const view = viewOf({ grants: [grant], ...objects });
      expect(evaluateGrant(grant, view, NOW).enforce).toBe(false);
      const explanation = explainUser({ grants: [grant], ...objects });
      expect(explanation.allowed).toBe(false);
      expect(grantsOf(explanation)).toEqual([expect.objectContaining({ effective: false, reason })]);
      expect(explanation.message).toContain(
        `PolicyGrant ${grant.metadata.namespace}/g is not effective (${reason})`,
      );
    });
  }

  it('names the item facts on the CatalogItem entries: missing, ambiguous, access type withdrawn', () => {
    const reasons = (objects: Partial<ListedObjects>) =>
      explainUser(objects)
        .objects.filter((object) => object.kind === 'CatalogItem')
        .map((object) => object.reason);
    expect(reasons({ items: [] })).toEqual(['ItemMissing']);
    expect(reasons({ items: [catalogItem('a'), catalogItem('b')] })).toEqual([
      'ItemAmbiguous',
      'ItemAmbiguous',
    ]);
    expect(reasons({ items: [catalogItem('a', { accessTypes: ['file'] })] })).toEqual([
      'AccessTypeWithdrawn',
    ]);
  });

  it('shows the binding of each namespace that holds a grant on the item', () => {
    const grant = policyGrant('g', {}, { namespace: 'team' });
    const namespaces = (bound?: string) =>
      explainUser({ grants: [grant], namespaces: bound ? [boundNamespace('team', bound)] : [] }).objects.find(
        (object) => object.kind === 'Namespace',
      );
    expect(namespaces(ORG_A)).toMatchObject({
      ref: 'team',
      effective: true,
      message: `bound to organisation ${ORG_A}`,
    });
    expect(namespaces(ORG_B)).toMatchObject({ reason: 'NamespaceBoundToAnotherOrganisation' });
    expect(namespaces()).toMatchObject({
      reason: 'NamespaceNotBound',
      message: 'not bound to an organisation',
    });
  });

  it('explains a conflict: the younger grant is blocked, the older one allows', () => {
    const older = policyGrant('a');
    const younger = policyGrant('b');
    const explanation = explainUser({ grants: [younger, older] });
    expect(explanation.allowed).toBe(true);
    expect(grantsOf(explanation).map((object) => [object.ref, object.reason])).toEqual([
      [`${ACL_NAMESPACE}/a`, 'Effective'],
      [`${ACL_NAMESPACE}/b`, 'Conflict'],
    ]);
    expect(reasonOfGrant(younger, { grants: [older, younger] })).toBe('Conflict');
  });

  it('leaves out grants to other users and of other access types', () => {
    const explanation = explainUser({
      grants: [
        policyGrant('other', { userId: OTHER_USER }),
        policyGrant('file', { constraints: { access: [{ accessType: 'file' }] } }),
      ],
    });
    expect(grantsOf(explanation)).toEqual([]);
    expect(explanation).toMatchObject({
      allowed: false,
      message: `denied: no grant gives user ${USER} api on ${ITEM_ID}`,
    });
  });

  it('needs a Membership for a GROUP grant: NotMember without one or once removed, Effective with one', () => {
    const grant = policyGrant('g', groupFields([ORG_B]));
    const member = membership('m', { organisationId: ORG_B });
    const removed = membership('m', { organisationId: ORG_B, removedAt: '2026-05-01T00:00:00Z' });
    const memberships = (list: Membership[]) =>
      explainUser({ grants: [grant], memberships: list }).objects.filter(
        (object) => object.kind === 'Membership',
      );
    expect(memberships([])).toEqual([expect.objectContaining({ ref: '', reason: 'NotMember' })]);
    expect(memberships([removed])).toEqual([
      expect.objectContaining({ ref: `${ACL_NAMESPACE}/m`, reason: 'NotMember' }),
    ]);
    expect(explainUser({ grants: [grant], memberships: [removed] }).allowed).toBe(false);
    expect(explainUser({ grants: [grant], memberships: [member] })).toMatchObject({
      allowed: true,
      message: `allowed by PolicyGrant ${ACL_NAMESPACE}/g with Membership ${ACL_NAMESPACE}/m`,
    });
  });

  describe('membership facts of organisations the reader does not administer', () => {
    /** The reader administers ORG_A only, as a provider naming ORG_B in a GROUP grant does not administer it. */
    const readerOfOrgA = (objects: Partial<ListedObjects>) =>
      Object.assign(viewOf(objects), {
        disclosesMembership: (organisationId: string) => organisationId === ORG_A,
      });
    const explainAsReader = (objects: Partial<ListedObjects>) =>
      explain(
        { subject: { type: 'user', id: USER }, itemId: ITEM_ID, accessType: 'api' },
        readerOfOrgA(objects),
        NOW,
      );
    const toB = policyGrant('to-b', groupFields([ORG_B]), {}, enforced('True'));
    const member = membership('m', { organisationId: ORG_B }, {});
    const removed = membership('m', { organisationId: ORG_B, removedAt: '2026-05-01T00:00:00Z' });

    it('are one neutral object whether the user is a member, was removed or never was', () => {
      const shown = [[member], [removed], []].map((memberships) =>
        explainAsReader({ grants: [toB], memberships }).objects.filter(
          (object) => object.kind === 'Membership',
        ),
      );
      expect(shown[0]).toEqual([
        {
          kind: 'Membership',
          ref: '',
          effective: false,
          reason: 'Undisclosed',
          message: `the memberships of organisation ${ORG_B} are shown only to its org_admins and cos_admin`,
        },
      ]);
      expect(shown[1]).toEqual(shown[0]);
      expect(shown[2]).toEqual(shown[0]);
      const denied = explainAsReader({ grants: [toB], memberships: [removed] });
      expect(denied.allowed).toBe(false);
      expect(JSON.stringify(denied)).not.toMatch(/2026-05-01|removed|is a member of organisation/);
    });

    it('still decide the verdict, which names neither the grant nor the organisation of a hidden path', () => {
      const allowed = explainAsReader({ grants: [toB], memberships: [member] });
      expect(allowed).toMatchObject({
        allowed: true,
        message: 'allowed by a GROUP grant, through a Membership the reader may not see',
      });
      expect(JSON.stringify(allowed)).not.toContain(`${ACL_NAMESPACE}/m`);
    });

    it('are shown for the organisations the reader administers, and a path through one is named first', () => {
      const toA = policyGrant('to-a', groupFields([ORG_A]), {}, enforced('True'));
      const memberOfA = membership('n', { organisationId: ORG_A });
      expect(explainAsReader({ grants: [toB, toA], memberships: [member, memberOfA] })).toMatchObject({
        allowed: true,
        message: `allowed by PolicyGrant ${ACL_NAMESPACE}/to-a with Membership ${ACL_NAMESPACE}/n`,
      });
    });

    it('are left out of a disagreement between the record and SpiceDB', () => {
      // The member's Membership is not Enforced yet: SpiceDB lags, which would date the membership.
      expect(explainAsReader({ grants: [toB], memberships: [member] })).toMatchObject({
        allowed: true,
        enforced: false,
        disagreement:
          'the record allows, but SpiceDB does not enforce it yet: objects the reader may not see not Enforced',
      });
    });
  });

  it('says when the record allows but the grant is not enforced yet, and the reverse', () => {
    const fresh = policyGrant('g');
    expect(explainUser({ grants: [fresh] })).toMatchObject({
      allowed: true,
      enforced: false,
      disagreement: `the record allows, but SpiceDB does not enforce it yet: PolicyGrant ${ACL_NAMESPACE}/g not Enforced`,
    });
    const revoked = policyGrant(
      'g',
      { revokedAt: '2026-05-01T00:00:00Z' },
      { generation: 2 },
      enforced('True', 1),
    );
    const explanation = explainUser({ grants: [revoked] });
    expect(explanation).toMatchObject({
      allowed: false,
      enforced: true,
      disagreement: `the record denies, but SpiceDB still enforces PolicyGrant ${ACL_NAMESPACE}/g: the controller has not acted yet`,
    });
    expect(grantsOf(explanation)[0]?.enforcement).toMatchObject({
      status: 'True',
      observedGeneration: 1,
      generation: 2,
      current: false,
    });
  });
});

describe('the explanation of an agent', () => {
  const explainAgent = (objects: Partial<ListedObjects>, accessType = 'api') =>
    explain({ subject: { type: 'agent', id: AGENT_ID }, itemId: ITEM_ID, accessType }, viewOf(objects), NOW);
  const delegationsOf = (explanation: Explanation) =>
    explanation.objects.filter((object) => object.kind === 'Delegation');

  it("allows through a querier delegation while its owner holds api, and carries the owner's explanation", () => {
    const explanation = explainAgent({
      grants: [policyGrant('g')],
      delegations: [delegation('d')],
      agents: [agent()],
    });
    expect(explanation).toMatchObject({ allowed: true, message: `allowed by Delegation ${ACL_NAMESPACE}/d` });
    expect(delegationsOf(explanation)[0]).toMatchObject({ reason: 'Effective', owner: { allowed: true } });
  });

  it('denies with OwnerLacksAccess when the owner has no effective grant', () => {
    const explanation = explainAgent({
      grants: [policyGrant('g', { revokedAt: '2026-05-01T00:00:00Z' })],
      delegations: [delegation('d')],
      agents: [agent()],
    });
    expect(explanation.allowed).toBe(false);
    const [explained] = delegationsOf(explanation);
    expect(explained).toMatchObject({ reason: 'OwnerLacksAccess', owner: { allowed: false } });
    expect(explained?.message).toContain(`the owner ${USER} lacks the access`);
  });

  it('withholds revoked, expired and foreign-owned delegations with the controller’s reasons', () => {
    const reason = (spec: Partial<Delegation['spec']>, owner = USER) =>
      delegationsOf(
        explainAgent({
          grants: [policyGrant('g')],
          delegations: [delegation('d', spec)],
          agents: [agent(owner)],
        }),
      )[0]?.reason;
    expect(reason({ revokedAt: '2026-05-01T00:00:00Z' })).toBe('Revoked');
    expect(reason({ expiryTime: '2026-05-01T00:00:00Z' })).toBe('Expired');
    expect(reason({}, OTHER_USER)).toBe('NotOwner');
  });

  it('says no delegation gives an access type other than api', () => {
    const explanation = explainAgent(
      { grants: [policyGrant('g')], delegations: [delegation('d')], agents: [agent()] },
      'file',
    );
    expect(explanation).toMatchObject({ allowed: false, objects: [] });
    expect(explanation.message).toContain('no delegation gives an agent access type file');
  });
});
