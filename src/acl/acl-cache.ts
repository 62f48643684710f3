import type { KubernetesObject } from '@kubernetes/client-node';
import type {
  AccessRequest,
  CatalogItem,
  Delegation,
  Membership,
  PolicyGrant,
} from '../api/v1alpha1/index.js';
import type { Logger } from '../observability/logger.js';
import { Informer, objectKey } from '../runtime/index.js';
import { kubeListWatch, type KubeClient } from '../kube/index.js';
import type { IndexDefinition } from '../kube/indexes.js';
import type { Registry } from '../spicedb/registry.js';
import { ClusterLister } from '../verdict/cluster-lister.js';
import { ORGANISATION_LABEL } from '../verdict/namespace-authorisation.js';
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

interface AclInformers {
  grants: Informer<PolicyGrant>;
  items: Informer<CatalogItem>;
  namespaces: Informer<KubernetesObject>;
  memberships: Informer<Membership>;
  delegations: Informer<Delegation>;
  accessRequests: Informer<AccessRequest>;
}

/**
 * The informers of the ACL API: every PolicyGrant (all namespaces), every CatalogItem, the namespaces bound to
 * an organisation and the Memberships, Delegations and AccessRequests of the ACL namespace.
 */
function aclInformers(kube: KubeClient, aclNamespace: string, logger?: Logger): AclInformers {
  const informer = <T extends KubernetesObject>(path: string, labelSelector?: string) =>
    new Informer<T>({
      source: kubeListWatch<T>(kube, path),
      name: path,
      ...(logger ? { logger } : {}),
      ...(labelSelector ? { labelSelector } : {}),
    });
  return {
    grants: informer<PolicyGrant>(paths.allPolicyGrants),
    items: informer<CatalogItem>(paths.catalogItems),
    namespaces: informer<KubernetesObject>(paths.namespaces, ORGANISATION_LABEL),
    memberships: informer<Membership>(paths.memberships(aclNamespace)),
    delegations: informer<Delegation>(paths.delegations(aclNamespace)),
    accessRequests: informer<AccessRequest>(paths.accessRequests(aclNamespace)),
  };
}

/**
 * The ACL API's view of the cluster: the one lister over its informers (listings and checks are lookups rather
 * than scans or apiserver lists), with what is the ACL API's own: the claim index, the platform listing's
 * order, and read-your-write for creates and revocations.
 */
export class AclCache extends ClusterLister {
  private readonly informers: Informer<KubernetesObject>[];
  private readonly waiters = new Map<string, Set<GrantWaiter>>();
  /** The platform listing's order of all grants, kept until the next grant event. */
  private ordered?: PolicyGrant[];

  constructor(kube: KubeClient, aclNamespace: string, registry: Registry, logger?: Logger) {
    const informers = aclInformers(kube, aclNamespace, logger);
    super({ ...informers, aclNamespace, registry });
    this.informers = Object.values(informers) as Informer<KubernetesObject>[];
    informers.grants.addEventHandler({
      onAdd: (grant) => this.changed(grant),
      onUpdate: (_old, grant) => this.changed(grant),
      onDelete: () => (this.ordered = undefined),
    });
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

  /** Grants that occupy the (subject, item, access type) of `key`, whatever their state. */
  grantsWithClaimKey(key: ClaimKey): PolicyGrant[] {
    return this.grantsBy(grantsByClaim, claimName(key));
  }

  /** Every grant in listing order (creationTimestamp, uid); do not modify the array. */
  allGrantsInOrder(): readonly PolicyGrant[] {
    this.ordered ??= distinctSorted(this.allGrants());
    return this.ordered;
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
    const cached = this.grant(key);
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
