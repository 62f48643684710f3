import { describe, expect, it, vi } from 'vitest';
import type { AccessRequest, Agent, Delegation, PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import { indexerOf } from '../../../src/runtime/indexed-cache.js';
import { ClusterLister } from '../../../src/verdict/cluster-lister.js';
import { candidateTupleKeys } from '../../../src/verdict/projection.js';
import {
  ACL_NAMESPACE,
  boundNamespace,
  catalogItem,
  groupFields,
  ITEM_ID,
  membership,
  ORG_A,
  ORG_B,
  OTHER_USER,
  OWNER,
  policyGrant,
  registry,
  USER,
} from '../controller/support/fakes.js';

const AGENT_ID = 'agent-7';

function delegation(name: string, ownerId: string): Delegation {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'Delegation',
    metadata: { name, namespace: ACL_NAMESPACE, uid: `uid-${name}` },
    spec: {
      agentId: AGENT_ID,
      ownerId,
      itemId: ITEM_ID,
      relation: 'querier',
      expiryTime: '2099-01-01T00:00:00Z',
    },
  };
}

const agent: Agent = {
  apiVersion: 'acl.policygrant.dev/v1alpha1',
  kind: 'Agent',
  metadata: { name: 'agent', namespace: ACL_NAMESPACE },
  spec: { agentId: AGENT_ID, ownerId: USER },
};

const accessRequest: AccessRequest = {
  apiVersion: 'acl.policygrant.dev/v1alpha1',
  kind: 'AccessRequest',
  metadata: { name: 'ask', namespace: ACL_NAMESPACE, uid: 'uid-ask' },
  spec: {
    consumerId: USER,
    itemId: ITEM_ID,
    itemType: 'DATABANK',
    access: [{ accessType: 'api' }],
    expiryTime: '2099-01-01T00:00:00Z',
  },
};

const individual = policyGrant('individual', { issuerId: OWNER });
const toOrganisations = policyGrant('group', groupFields([ORG_A, ORG_B]), { namespace: 'team' });
const [individualTuple = ''] = candidateTupleKeys(individual.spec, registry);
const elsewhere = policyGrant('elsewhere', { itemId: 'urn:dx:cat:item:other', userId: OTHER_USER });

function everyKind(): ClusterLister {
  return new ClusterLister({
    grants: indexerOf([individual, toOrganisations, elsewhere]),
    items: indexerOf([
      catalogItem('weather'),
      catalogItem('rain', { itemId: 'urn:dx:cat:item:rain', ownerId: USER }),
    ]),
    namespaces: indexerOf([boundNamespace('team', ORG_A)]),
    memberships: indexerOf([
      membership('removed', { removedAt: '2026-01-01T00:00:00Z' }),
      membership('member', {}),
      membership('of-b', { organisationId: ORG_B, userId: OTHER_USER }),
      membership('in-group', { groupId: 'analysts' }),
    ]),
    delegations: indexerOf([delegation('mine', USER), delegation('theirs', OTHER_USER)]),
    agents: indexerOf([agent]),
    accessRequests: indexerOf([accessRequest]),
    registry,
    aclNamespace: ACL_NAMESPACE,
  });
}

const names = (objects: { metadata?: { name?: string } }[]) => objects.map((obj) => obj.metadata?.name);

describe('the cluster lister', () => {
  it('answers the questions about grants by their indexes', () => {
    const lister = everyKind();
    expect(lister.grant(`${ACL_NAMESPACE}/individual`)).toBe(individual);
    expect(lister.grantByUid('uid-group')).toBe(toOrganisations);
    expect(names(lister.grantsOfConsumer(USER, [ORG_B]))).toEqual(['individual', 'group']);
    expect(names(lister.grantsOfConsumer(USER))).toEqual(['individual']);
    expect(names(lister.grantsIssuedBy(OWNER))).toEqual(['individual']);
    expect(names(lister.grantsOnItem(ITEM_ID))).toEqual(['individual', 'group']);
    expect(names(lister.grantsInNamespace('team'))).toEqual(['group']);
    expect(names(lister.allGrants())).toEqual(['individual', 'group', 'elsewhere']);
    expect(names(lister.grantsWithTupleKey(individualTuple))).toEqual(['individual']);
  });

  it('answers the questions about items and namespaces', () => {
    const lister = everyKind();
    expect(lister.item('rain')?.spec.ownerId).toBe(USER);
    expect(names(lister.itemsWithId(ITEM_ID))).toEqual(['weather']);
    expect(names(lister.itemsOwnedBy(USER))).toEqual(['rain']);
    expect(names(lister.itemsOfOrganisation(ORG_A))).toEqual(['weather', 'rain']);
    expect(lister.allItems()).toHaveLength(2);
    expect(lister.organisationOfNamespace('team')).toBe(ORG_A);
    expect(lister.organisationOfNamespace('unbound')).toBeUndefined();
  });

  it('prefers a member among the Memberships of one key, and counts only members', () => {
    const lister = everyKind();
    expect(lister.membership({ organisationId: ORG_A, userId: USER })?.metadata.name).toBe('member');
    expect(lister.isOrganisationMember(ORG_A, USER)).toBe(true);
    expect(lister.isOrganisationMember(ORG_B, USER)).toBe(false);
    expect(lister.organisationsOfMember(USER)).toEqual([ORG_A]);
    expect(names(lister.membershipsOf(ORG_A))).toEqual(['removed', 'member']);
    expect(names(lister.membershipsOf(ORG_A, 'analysts'))).toEqual(['in-group']);
  });

  it('answers the questions about delegations, agents and access requests', () => {
    const lister = everyKind();
    expect(lister.delegationByUid('uid-theirs')?.spec.ownerId).toBe(OTHER_USER);
    expect(names(lister.delegationsOf(USER))).toEqual(['mine']);
    expect(names(lister.delegationsOfAgent(AGENT_ID))).toEqual(['mine', 'theirs']);
    expect(lister.agentOwner(AGENT_ID)).toBe(USER);
    expect(lister.accessRequestByUid('uid-ask')).toBe(accessRequest);
    expect(names(lister.accessRequestsOf(USER))).toEqual(['ask']);
    expect(names(lister.accessRequestsOnItem(ITEM_ID))).toEqual(['ask']);
    expect(lister.disclosesMembership(ORG_B)).toBe(true);
  });

  it('answers nothing about a kind it is not given', () => {
    const lister = new ClusterLister({
      grants: indexerOf<PolicyGrant>([]),
      items: indexerOf([catalogItem('weather')]),
      namespaces: indexerOf([]),
      registry,
      aclNamespace: ACL_NAMESPACE,
    });
    expect(lister.membership({ organisationId: ORG_A, userId: USER })).toBeUndefined();
    expect(lister.delegationsOfAgent(AGENT_ID)).toEqual([]);
    expect(lister.agentOwner(AGENT_ID)).toBeUndefined();
    expect(lister.accessRequestsOf(USER)).toEqual([]);
  });

  it('registers an index on its first question only, and then keeps it current', () => {
    const grants = indexerOf([individual]);
    const addIndex = vi.spyOn(grants, 'addIndex');
    const lister = new ClusterLister({
      grants,
      items: indexerOf([]),
      namespaces: indexerOf([]),
      registry,
      aclNamespace: ACL_NAMESPACE,
    });
    expect(addIndex).not.toHaveBeenCalled();
    expect(names(lister.grantsOnItem(ITEM_ID))).toEqual(['individual']);
    expect(names(lister.grantsOnItem(ITEM_ID))).toEqual(['individual']);
    expect(addIndex.mock.calls.map(([name]) => name)).toEqual(['itemId']);
  });

  it('indexes a malformed grant under no tuple rather than failing the index', () => {
    const malformed = policyGrant('malformed', { constraints: undefined as never });
    const lister = new ClusterLister({
      grants: indexerOf([malformed, individual]),
      items: indexerOf([]),
      namespaces: indexerOf([]),
      registry,
      aclNamespace: ACL_NAMESPACE,
    });
    expect(names(lister.grantsWithTupleKey(individualTuple))).toEqual(['individual']);
    expect(names(lister.grantsOnItem(ITEM_ID))).toEqual(['malformed', 'individual']);
  });
});

describe('an indexer over a list', () => {
  it('keys objects as an informer does and keeps the later of two with one key', () => {
    const later = policyGrant('individual', { issuerId: OTHER_USER });
    const indexer = indexerOf([individual, later, catalogItem('weather')]);
    expect(indexer.get(`${ACL_NAMESPACE}/individual`)).toBe(later);
    expect(indexer.get('weather')?.kind).toBe('CatalogItem');
    expect(indexer.list()).toHaveLength(2);
  });
});
