import type { KubernetesObject } from '@kubernetes/client-node';
import { hasFinalizer, type CatalogItem, type PolicyGrant } from '../api/v1alpha1/index.js';
import type { Relationship } from '../spicedb/client.js';
import { decodeObjectId } from '../spicedb/object-id.js';
import type { Registry } from '../spicedb/registry.js';
import { GrantEvaluator, type GrantView } from '../verdict/grant-verdict.js';
import { ORGANISATION_LABEL } from '../verdict/namespace-authorisation.js';
import { OWNER_RELATION, projectOwners } from '../verdict/projection.js';
import { catalogItemIndexes, grantIndexes } from '../kube/cluster-indexes.js';
import { addIndexes, type IndexDefinition, type Indexer } from '../kube/indexes.js';
import { parseTupleKey, tupleKey, type TupleKey } from '../verdict/tuple-key.js';

export interface ClusterViewOptions {
  grants: Indexer<PolicyGrant>;
  items: Indexer<CatalogItem>;
  /** Only namespaces bound to an organisation need to be here. */
  namespaces: Indexer<KubernetesObject>;
  registry: Registry;
  aclNamespace: string;
}

/**
 * The controller's view of the cluster: the three caches and the indexes that make the questions of the
 * reconcilers and the resync cheap (which grants are on an item, in a namespace, or project a tuple).
 */
export class ClusterView implements GrantView {
  readonly registry: Registry;
  readonly aclNamespace: string;
  private readonly grants: Indexer<PolicyGrant>;
  private readonly items: Indexer<CatalogItem>;
  private readonly namespaces: Indexer<KubernetesObject>;
  private readonly grantsByTuple: IndexDefinition<PolicyGrant>;

  constructor(options: ClusterViewOptions) {
    this.grants = options.grants;
    this.items = options.items;
    this.namespaces = options.namespaces;
    this.registry = options.registry;
    this.aclNamespace = options.aclNamespace;
    this.grantsByTuple = grantIndexes.byTuple(this.registry);
    addIndexes(this.grants, [grantIndexes.byItem, grantIndexes.byNamespace, this.grantsByTuple]);
    addIndexes(this.items, [catalogItemIndexes.byItem]);
  }

  grant(key: string): PolicyGrant | undefined {
    return this.grants.get(key);
  }

  item(name: string): CatalogItem | undefined {
    return this.items.get(name);
  }

  allGrants(): PolicyGrant[] {
    return this.grants.list();
  }

  allItems(): CatalogItem[] {
    return this.items.list();
  }

  itemsWithId(itemId: string): CatalogItem[] {
    return this.items.byIndex(catalogItemIndexes.byItem.name, itemId);
  }

  organisationOfNamespace(namespace: string): string | undefined {
    return this.namespaces.get(namespace)?.metadata?.labels?.[ORGANISATION_LABEL];
  }

  grantsWithTupleKey(key: TupleKey): PolicyGrant[] {
    return this.grants.byIndex(this.grantsByTuple.name, key);
  }

  grantsOnItem(itemId: string): PolicyGrant[] {
    return this.grants.byIndex(grantIndexes.byItem.name, itemId);
  }

  grantsInNamespace(namespace: string): PolicyGrant[] {
    return this.grants.byIndex(grantIndexes.byNamespace.name, namespace);
  }

  /** The owner relationships of an item id: those of its CatalogItem, none when there is none or it is ambiguous. */
  ownersOf(itemId: string): Relationship[] {
    const items = this.itemsWithId(itemId);
    const [item] = items;
    return items.length === 1 && item ? projectOwners(item.spec, this.registry) : [];
  }

  evaluator(now: Date): GrantEvaluator {
    return new GrantEvaluator(this, now);
  }

  /** `explain` and `explainWritable` under one evaluator: the verdicts a batch of questions needs are made once. */
  explainer(now: Date) {
    const evaluator = this.evaluator(now);
    return {
      explain: (key: TupleKey, except?: string) => this.explain(key, evaluator, except),
      explainWritable: (key: TupleKey) => this.explainWritable(key, evaluator),
    };
  }

  /**
   * What the resync may write under `key`: as `explain`, but a grant's tuple only once the grant holds its
   * finalizer and has a status (its first reconcile is done). Before that, nothing guarantees that deleting
   * the grant removes the tuple again: a grant deleted before its first reconcile goes without one, and the
   * ACL API releases the finalizer of a grant it rolls back while no status is written (docs/controller.md,
   * "Finalizer from birth"). Its reconcile writes the tuple, finalizer first.
   */
  explainWritable(key: TupleKey, evaluator: GrantEvaluator): Relationship | undefined {
    if (parseTupleKey(key).relation === OWNER_RELATION) return this.explain(key, evaluator);
    const enforced = evaluator.enforcedBy(key);
    const reconciled = enforced && hasFinalizer(enforced.grant) && enforced.grant.status !== undefined;
    return reconciled ? enforced.relationship : undefined;
  }

  /**
   * The relationship that some resource wants under `key` now (with its expiration), or undefined when no
   * grant or CatalogItem explains the tuple: it is then an orphan.
   */
  explain(key: TupleKey, evaluator: GrantEvaluator, excludedGrantKey?: string): Relationship | undefined {
    const parsed = parseTupleKey(key);
    if (parsed.relation !== OWNER_RELATION) return evaluator.enforcedBy(key, excludedGrantKey)?.relationship;
    let itemId: string;
    try {
      itemId = decodeObjectId(parsed.resource.id);
    } catch {
      return undefined;
    }
    return this.ownersOf(itemId).find((owner) => tupleKey(owner) === key);
  }
}
