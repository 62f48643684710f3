import {
  membershipKeyString,
  type AccessRequest,
  type Agent,
  type CatalogItem,
  type Delegation,
  type Membership,
  type PolicyGrant,
} from '../api/v1alpha1/index.js';
import type { IndexDefinition } from '../kube/indexes.js';
import type { Registry } from '../spicedb/registry.js';
import { candidateTupleKeys } from './projection.js';

// The indexes of the project's kinds, defined once: a ClusterLister registers on its indexers the ones its
// questions read, whether informers (the controller, the ACL API) or lists of objects (kubectl grants) feed them.

const index = <T>(name: string, values: (obj: T) => (string | undefined)[]): IndexDefinition<T> => ({
  name,
  values,
});

function byUid<T extends { metadata: { uid?: string } }>(): IndexDefinition<T> {
  return index('uid', (obj: T) => [obj.metadata.uid]);
}

/** The consumer keys of a grant: `user:<id>` (INDIVIDUAL) or `organization:<org>` per allowed org (GROUP). */
function consumerKeys(grant: PolicyGrant): string[] {
  if (grant.spec.policyType === 'INDIVIDUAL') return [`user:${grant.spec.userId}`];
  return (grant.spec.constraints.subjects?.allowedOrgIds ?? []).map((org) => `organization:${org}`);
}

/** The key of an organisation's (no group) or a group's member set. */
export function memberSetKey(organisationId: string, groupId: string | undefined): string {
  return `${organisationId}|${groupId ?? ''}`;
}

export const grantIndexes = {
  byUid: byUid<PolicyGrant>(),
  /** `user:<id>` or `organization:<org>`: see consumerKeys. */
  byConsumer: index('consumer', consumerKeys),
  byIssuer: index('issuer', (grant: PolicyGrant) => [grant.spec.issuerId]),
  byItem: index('itemId', (grant: PolicyGrant) => [grant.spec.itemId]),
  byNamespace: index('namespace', (grant: PolicyGrant) => [grant.metadata.namespace ?? '']),
  /** The tuples a grant projects when enforced, whatever its state. */
  byTuple: (registry: Registry) =>
    index('tupleKey', (grant: PolicyGrant) => candidateTupleKeys(grant.spec, registry)),
};

export const catalogItemIndexes = {
  byItem: index('itemId', (item: CatalogItem) => [item.spec.itemId]),
  byOrganisation: index('organisation', (item: CatalogItem) => [item.spec.organisationId]),
  byOwner: index('owner', (item: CatalogItem) => [item.spec.ownerId]),
};

export const membershipIndexes = {
  byMembership: index('membership', (membership: Membership) => [membershipKeyString(membership.spec)]),
  /** The user of a Membership of an organisation itself (no group). */
  byOrganisationMember: index('organisationMember', (membership: Membership) => [
    membership.spec.groupId === undefined ? membership.spec.userId : undefined,
  ]),
  byMemberSet: index('memberSet', (membership: Membership) => [
    memberSetKey(membership.spec.organisationId, membership.spec.groupId),
  ]),
};

export const delegationIndexes = {
  byUid: byUid<Delegation>(),
  byOwner: index('owner', (delegation: Delegation) => [delegation.spec.ownerId]),
  byAgent: index('agentId', (delegation: Delegation) => [delegation.spec.agentId]),
};

export const agentIndexes = {
  byAgent: index('agentId', (agent: Agent) => [agent.spec.agentId]),
};

export const accessRequestIndexes = {
  byUid: byUid<AccessRequest>(),
  byConsumer: index('consumer', (request: AccessRequest) => [request.spec.consumerId]),
  byItem: index('itemId', (request: AccessRequest) => [request.spec.itemId]),
};
