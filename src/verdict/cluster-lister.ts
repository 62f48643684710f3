import type { KubernetesObject } from '@kubernetes/client-node';
import {
  isMember,
  membershipKeyString,
  type AccessRequest,
  type Agent,
  type CatalogItem,
  type Delegation,
  type Membership,
  type MembershipKey,
  type PolicyGrant,
} from '../api/v1alpha1/index.js';
import { registerIndex, type IndexDefinition, type Indexer } from '../kube/indexes.js';
import type { Registry } from '../spicedb/registry.js';
import {
  accessRequestIndexes,
  agentIndexes,
  catalogItemIndexes,
  delegationIndexes,
  grantIndexes,
  memberSetKey,
  membershipIndexes,
} from './cluster-indexes.js';
import type { ExplanationView } from './explanation.js';
import { ORGANISATION_LABEL } from './namespace-authorisation.js';
import type { TupleKey } from './tuple-key.js';

/**
 * The caches a lister reads, keyed as client-go keys them (`namespace/name`, or `name`). A kind a process does
 * not cache is left out and answers nothing: the controller's view reads grants, items and namespaces only, the
 * ACL API caches no Agents.
 */
export interface ClusterIndexers {
  grants: Indexer<PolicyGrant>;
  items: Indexer<CatalogItem>;
  /** Only namespaces bound to an organisation need to be here. */
  namespaces: Indexer<KubernetesObject>;
  /** Those of the ACL namespace only, as for Delegations, Agents and AccessRequests. */
  memberships?: Indexer<Membership>;
  delegations?: Indexer<Delegation>;
  agents?: Indexer<Agent>;
  accessRequests?: Indexer<AccessRequest>;
}

export interface ClusterListerOptions extends ClusterIndexers {
  registry: Registry;
  aclNamespace: string;
}

/**
 * The one view of the project's objects (client-go's listers over indexers), read by the grant verdict, the
 * explanation, the controller, the ACL API and kubectl grants. Each index is registered on its indexer the first
 * time a question reads it, so a process pays, in memory and on every change, only for the indexes of the
 * questions it asks (the controller's hundred thousand grants carry three).
 */
export class ClusterLister implements ExplanationView {
  readonly registry: Registry;
  readonly aclNamespace: string;
  private readonly indexers: ClusterIndexers;
  private readonly grantsByTuple: IndexDefinition<PolicyGrant>;
  /** The names of the indexes registered so far, by indexer. */
  private readonly registered = new Map<object, Set<string>>();

  constructor({ registry, aclNamespace, ...indexers }: ClusterListerOptions) {
    this.registry = registry;
    this.aclNamespace = aclNamespace;
    this.indexers = indexers;
    this.grantsByTuple = grantIndexes.byTuple(registry);
  }

  /** The objects of `indexer` under `value` of the index `definition`, registering the index on first use. */
  protected byIndex<T>(indexer: Indexer<T> | undefined, definition: IndexDefinition<T>, value: string): T[] {
    if (indexer === undefined) return [];
    const names = this.registered.get(indexer) ?? new Set<string>();
    if (!names.has(definition.name)) {
      registerIndex(indexer, definition);
      this.registered.set(indexer, names.add(definition.name));
    }
    return indexer.byIndex(definition.name, value);
  }

  grant(key: string): PolicyGrant | undefined {
    return this.indexers.grants.get(key);
  }

  allGrants(): PolicyGrant[] {
    return this.indexers.grants.list();
  }

  grantByUid(uid: string): PolicyGrant | undefined {
    return this.grantsBy(grantIndexes.byUid, uid)[0];
  }

  /** INDIVIDUAL grants to the user, and GROUP grants that allow one of `organisationIds`. */
  grantsOfConsumer(userId: string, organisationIds: readonly string[] = []): PolicyGrant[] {
    return [
      ...this.grantsBy(grantIndexes.byConsumer, `user:${userId}`),
      ...organisationIds.flatMap((org) => this.grantsBy(grantIndexes.byConsumer, `organization:${org}`)),
    ];
  }

  grantsIssuedBy(issuerId: string): PolicyGrant[] {
    return this.grantsBy(grantIndexes.byIssuer, issuerId);
  }

  grantsOnItem(itemId: string): PolicyGrant[] {
    return this.grantsBy(grantIndexes.byItem, itemId);
  }

  grantsInNamespace(namespace: string): PolicyGrant[] {
    return this.grantsBy(grantIndexes.byNamespace, namespace);
  }

  /** Grants that project `key` when enforced, whatever their state. */
  grantsWithTupleKey(key: TupleKey): PolicyGrant[] {
    return this.grantsBy(this.grantsByTuple, key);
  }

  protected grantsBy(definition: IndexDefinition<PolicyGrant>, value: string): PolicyGrant[] {
    return this.byIndex(this.indexers.grants, definition, value);
  }

  item(name: string): CatalogItem | undefined {
    return this.indexers.items.get(name);
  }

  allItems(): CatalogItem[] {
    return this.indexers.items.list();
  }

  itemsWithId(itemId: string): CatalogItem[] {
    return this.byIndex(this.indexers.items, catalogItemIndexes.byItem, itemId);
  }

  itemsOwnedBy(ownerId: string): CatalogItem[] {
    return this.byIndex(this.indexers.items, catalogItemIndexes.byOwner, ownerId);
  }

  itemsOfOrganisation(organisationId: string): CatalogItem[] {
    return this.byIndex(this.indexers.items, catalogItemIndexes.byOrganisation, organisationId);
  }

  organisationOfNamespace(namespace: string): string | undefined {
    return this.indexers.namespaces.get(namespace)?.metadata?.labels?.[ORGANISATION_LABEL];
  }

  /** The Membership object of `key` (removed or not), if one exists; a member's first when several do. */
  membership(key: MembershipKey): Membership | undefined {
    const candidates = this.byIndex(
      this.indexers.memberships,
      membershipIndexes.byMembership,
      membershipKeyString(key),
    );
    return candidates.find(isMember) ?? candidates[0];
  }

  /** The Memberships (removed or not) of an organisation itself (no groupId), or of one of its groups. */
  membershipsOf(organisationId: string, groupId?: string): Membership[] {
    return this.byIndex(
      this.indexers.memberships,
      membershipIndexes.byMemberSet,
      memberSetKey(organisationId, groupId),
    );
  }

  /** Default deny: a member only while a Membership of the organisation itself (no group) says so. */
  isOrganisationMember(organisationId: string, userId: string): boolean {
    const membership = this.membership({ organisationId, userId });
    return membership !== undefined && isMember(membership);
  }

  /** The organisations a Membership (of the organisation itself, not removed) says the user is a member of. */
  organisationsOfMember(userId: string): string[] {
    return this.byIndex(this.indexers.memberships, membershipIndexes.byOrganisationMember, userId)
      .filter(isMember)
      .map((membership) => membership.spec.organisationId);
  }

  delegationByUid(uid: string): Delegation | undefined {
    return this.byIndex(this.indexers.delegations, delegationIndexes.byUid, uid)[0];
  }

  /** The Delegations (of any state) whose delegating user is `ownerId`. */
  delegationsOf(ownerId: string): Delegation[] {
    return this.byIndex(this.indexers.delegations, delegationIndexes.byOwner, ownerId);
  }

  /** The Delegations (of any state) to the agent. */
  delegationsOfAgent(agentId: string): Delegation[] {
    return this.byIndex(this.indexers.delegations, delegationIndexes.byAgent, agentId);
  }

  /** The owner the agent's Agent object names, if one is cached. */
  agentOwner(agentId: string): string | undefined {
    return this.byIndex(this.indexers.agents, agentIndexes.byAgent, agentId)[0]?.spec.ownerId;
  }

  /** Whoever reads the whole view may see every membership (a reader of the ACL API sees less: see explain). */
  disclosesMembership(_organisationId: string): boolean {
    return true;
  }

  accessRequestByUid(uid: string): AccessRequest | undefined {
    return this.byIndex(this.indexers.accessRequests, accessRequestIndexes.byUid, uid)[0];
  }

  /** The AccessRequests (of any state) that `consumerId` made. */
  accessRequestsOf(consumerId: string): AccessRequest[] {
    return this.byIndex(this.indexers.accessRequests, accessRequestIndexes.byConsumer, consumerId);
  }

  /** The AccessRequests (of any state) on the item. */
  accessRequestsOnItem(itemId: string): AccessRequest[] {
    return this.byIndex(this.indexers.accessRequests, accessRequestIndexes.byItem, itemId);
  }
}
