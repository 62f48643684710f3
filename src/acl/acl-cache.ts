import type { KubernetesObject } from '@kubernetes/client-node';
import {
  isMember,
  type AccessRequest,
  membershipKeyString,
  type CatalogItem,
  type Delegation,
  type Membership,
  type MembershipKey,
  type PolicyGrant,
} from '../api/v1alpha1/index.js';
import type { Logger } from '../observability/logger.js';
import { Informer, objectKey } from '../runtime/index.js';
import { kubeListWatch, type KubeClient } from '../kube/index.js';
import {
  accessRequestIndexes,
  catalogItemIndexes,
  delegationIndexes,
  grantIndexes,
  memberSetKey,
  membershipIndexes,
} from '../kube/cluster-indexes.js';
import { addIndexes, type IndexDefinition } from '../kube/indexes.js';
import type { Registry } from '../spicedb/registry.js';
import type { GrantView } from '../verdict/grant-verdict.js';
import { ORGANISATION_LABEL } from '../verdict/namespace-authorisation.js';
import type { TupleKey } from '../verdict/tuple-key.js';
import { claimKeys, claimName, type ClaimKey } from './policies/grant-claims.js';
import { distinctSorted } from './policies/policy-rows.js';
import { paths } from './resources.js';

/** The ACL API's own index: which grants occupy a claim (subject, item, access type). */
const grantsByClaim: IndexDefinition<PolicyGrant> = {
  name: 'claim',
  values: (grant) => claimKeys(grant.spec).map(claimName),
};

interface GrantWaiter {
  done: (seen: boolean) => void;
  predicate: (grant: PolicyGrant) => boolean;
}

/**
 * The ACL API's view of the cluster, kept by informers of the project's runtime: every PolicyGrant (all
 * namespaces), every CatalogItem, the namespaces bound to an organisation and the Memberships, Delegations and
 * AccessRequests of the ACL namespace; with the indexes that make each listing and check a lookup rather than a scan or an apiserver
 * list. It is the world of the grant verdict, as the controller's caches are the controller's.
 */
export class AclCache implements GrantView {
  readonly grants: Informer<PolicyGrant>;
  readonly items: Informer<CatalogItem>;
  readonly namespaces: Informer<KubernetesObject>;
  readonly memberships: Informer<Membership>;
  readonly delegations: Informer<Delegation>;
  readonly accessRequests: Informer<AccessRequest>;
  private readonly grantByTuple: IndexDefinition<PolicyGrant>;
  private readonly waiters = new Map<string, Set<GrantWaiter>>();
  /** The platform listing's order of all grants, kept until the next grant event. */
  private ordered?: PolicyGrant[];

  constructor(
    kube: KubeClient,
    readonly aclNamespace: string,
    readonly registry: Registry,
    logger?: Logger,
  ) {
    const informer = <T extends KubernetesObject>(path: string, labelSelector?: string) =>
      new Informer<T>({
        source: kubeListWatch<T>(kube, path),
        name: path,
        ...(logger ? { logger } : {}),
        ...(labelSelector ? { labelSelector } : {}),
      });
    this.grants = informer<PolicyGrant>(paths.allPolicyGrants);
    this.items = informer<CatalogItem>(paths.catalogItems);
    this.namespaces = informer<KubernetesObject>(paths.namespaces, ORGANISATION_LABEL);
    this.memberships = informer<Membership>(paths.memberships(aclNamespace));
    this.delegations = informer<Delegation>(paths.delegations(aclNamespace));
    this.accessRequests = informer<AccessRequest>(paths.accessRequests(aclNamespace));

    this.grantByTuple = grantIndexes.byTuple(registry);
    addIndexes(this.grants, [
      grantIndexes.byUid,
      grantIndexes.byConsumer,
      grantIndexes.byIssuer,
      grantIndexes.byItem,
      grantsByClaim,
      this.grantByTuple,
    ]);
    addIndexes(this.items, Object.values(catalogItemIndexes));
    addIndexes(this.memberships, Object.values(membershipIndexes));
    addIndexes(this.delegations, Object.values(delegationIndexes));
    addIndexes(this.accessRequests, Object.values(accessRequestIndexes));
    this.grants.addEventHandler({
      onAdd: (grant) => this.changed(grant),
      onUpdate: (_old, grant) => this.changed(grant),
      onDelete: () => (this.ordered = undefined),
    });
  }

  private get informers(): Informer<KubernetesObject>[] {
    return [
      this.grants,
      this.items,
      this.namespaces,
      this.memberships,
      this.delegations,
      this.accessRequests,
    ] as unknown as Informer<KubernetesObject>[];
  }

  start(): void {
    for (const informer of this.informers) informer.start();
  }

  async stop(): Promise<void> {
    for (const waiters of this.waiters.values()) for (const waiter of waiters) waiter.done(false);
    await Promise.all(this.informers.map((informer) => informer.stop()));
  }

  /** Resolves true once every informer has listed, false when `timeoutMs` passes first. */
  async waitForSync(timeoutMs: number): Promise<boolean> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      await Promise.all(this.informers.map((informer) => informer.waitForSync(signal)));
      return true;
    } catch {
      return false;
    }
  }

  /** Names of the informers that have not listed yet. */
  unsynced(): string[] {
    return this.informers.filter((informer) => !informer.hasSynced()).map((informer) => informer.name);
  }

  grantByUid(uid: string): PolicyGrant | undefined {
    return this.grants.byIndex(grantIndexes.byUid.name, uid)[0];
  }

  /** INDIVIDUAL grants to the user, and GROUP grants that allow one of `organisationIds`. */
  grantsOfConsumer(userId: string, organisationIds: readonly string[] = []): PolicyGrant[] {
    return [
      ...this.grants.byIndex(grantIndexes.byConsumer.name, `user:${userId}`),
      ...organisationIds.flatMap((org) =>
        this.grants.byIndex(grantIndexes.byConsumer.name, `organization:${org}`),
      ),
    ];
  }

  grantsIssuedBy(issuerId: string): PolicyGrant[] {
    return this.grants.byIndex(grantIndexes.byIssuer.name, issuerId);
  }

  grantsOnItem(itemId: string): PolicyGrant[] {
    return this.grants.byIndex(grantIndexes.byItem.name, itemId);
  }

  /** Grants that occupy the (subject, item, access type) of `key`, whatever their state. */
  grantsWithClaimKey(key: ClaimKey): PolicyGrant[] {
    return this.grants.byIndex(grantsByClaim.name, claimName(key));
  }

  /** Grants that project `key` when enforced, whatever their state. */
  grantsWithTupleKey(key: TupleKey): PolicyGrant[] {
    return this.grants.byIndex(this.grantByTuple.name, key);
  }

  allGrants(): PolicyGrant[] {
    return this.grants.list();
  }

  /** Every grant in listing order (creationTimestamp, uid); do not modify the array. */
  allGrantsInOrder(): readonly PolicyGrant[] {
    this.ordered ??= distinctSorted(this.grants.list());
    return this.ordered;
  }

  itemsWithId(itemId: string): CatalogItem[] {
    return this.items.byIndex(catalogItemIndexes.byItem.name, itemId);
  }

  itemsOwnedBy(ownerId: string): CatalogItem[] {
    return this.items.byIndex(catalogItemIndexes.byOwner.name, ownerId);
  }

  itemsOfOrganisation(organisationId: string): CatalogItem[] {
    return this.items.byIndex(catalogItemIndexes.byOrganisation.name, organisationId);
  }

  /** The Membership object of `key` (removed or not), if one exists. */
  membership(key: MembershipKey): Membership | undefined {
    return this.memberships.byIndex(membershipIndexes.byMembership.name, membershipKeyString(key))[0];
  }

  /** The Memberships (removed or not) of an organisation itself (no groupId), or of one of its groups. */
  membershipsOf(organisationId: string, groupId?: string): Membership[] {
    return this.memberships.byIndex(
      membershipIndexes.byMemberSet.name,
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
    return this.memberships
      .byIndex(membershipIndexes.byOrganisationMember.name, userId)
      .filter(isMember)
      .map((membership) => membership.spec.organisationId);
  }

  delegationByUid(uid: string): Delegation | undefined {
    return this.delegations.byIndex(delegationIndexes.byUid.name, uid)[0];
  }

  /** The Delegations (of any state) whose delegating user is `ownerId`. */
  delegationsOf(ownerId: string): Delegation[] {
    return this.delegations.byIndex(delegationIndexes.byOwner.name, ownerId);
  }

  accessRequestByUid(uid: string): AccessRequest | undefined {
    return this.accessRequests.byIndex(accessRequestIndexes.byUid.name, uid)[0];
  }

  /** The AccessRequests (of any state) that `consumerId` made. */
  accessRequestsOf(consumerId: string): AccessRequest[] {
    return this.accessRequests.byIndex(accessRequestIndexes.byConsumer.name, consumerId);
  }

  /** The AccessRequests (of any state) on the item. */
  accessRequestsOnItem(itemId: string): AccessRequest[] {
    return this.accessRequests.byIndex(accessRequestIndexes.byItem.name, itemId);
  }

  organisationOfNamespace(namespace: string): string | undefined {
    return this.namespaces.get(namespace)?.metadata?.labels?.[ORGANISATION_LABEL];
  }

  /**
   * Resolves true once the cache holds the grant at `namespace/name` in a state that satisfies `predicate`
   * (at once if it already does), false after `timeoutMs`: read-your-write for creates and revocations.
   */
  waitForGrant(
    namespace: string,
    name: string,
    predicate: (grant: PolicyGrant) => boolean,
    timeoutMs: number,
  ): Promise<boolean> {
    const key = `${namespace}/${name}`;
    const cached = this.grants.get(key);
    if (cached && predicate(cached)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiters = this.waiters.get(key) ?? new Set<GrantWaiter>();
      const waiter: GrantWaiter = {
        predicate,
        done: (seen) => {
          clearTimeout(timer);
          waiters.delete(waiter);
          if (waiters.size === 0) this.waiters.delete(key);
          resolve(seen);
        },
      };
      const timer = setTimeout(() => waiter.done(false), timeoutMs);
      waiters.add(waiter);
      this.waiters.set(key, waiters);
    });
  }

  private changed(grant: PolicyGrant): void {
    this.ordered = undefined;
    this.notifyWaiters(grant);
  }

  private notifyWaiters(grant: PolicyGrant): void {
    const waiters = this.waiters.get(objectKey(grant));
    for (const waiter of [...(waiters ?? [])]) if (waiter.predicate(grant)) waiter.done(true);
  }
}
