import { hasFinalizer } from '../api/v1alpha1/index.js';
import type { Relationship } from '../spicedb/client.js';
import { decodeObjectId } from '../spicedb/object-id.js';
import { ClusterLister } from '../verdict/cluster-lister.js';
import { GrantEvaluator } from '../verdict/grant-verdict.js';
import { OWNER_RELATION, projectOwners } from '../verdict/projection.js';
import { parseTupleKey, tupleKey, type TupleKey } from '../verdict/tuple-key.js';

/**
 * The controller's view of the cluster: the one lister over its caches of grants, items and namespaces, with
 * the questions of the reconcilers and the resync that are the controller's own (what a tuple's owner or grant
 * wants, what the resync may write).
 */
export class ClusterView extends ClusterLister {
  /** The owner relationships of an item id: those of its CatalogItem, none when there is none or it is ambiguous. */
  ownersOf(itemId: string): Relationship[] {
    const items = this.itemsWithId(itemId);
    const [item] = items;
    return items.length === 1 && item ? projectOwners(item.spec, this.registry) : [];
  }

  evaluator(now: Date): GrantEvaluator {
    return new GrantEvaluator(this, now);
  }

  /** `accountFor` and `accountForWritable` under one evaluator: the verdicts a batch of questions needs are made once. */
  accounting(now: Date) {
    const evaluator = this.evaluator(now);
    return {
      accountFor: (key: TupleKey, except?: string) => this.accountFor(key, evaluator, except),
      accountForWritable: (key: TupleKey) => this.accountForWritable(key, evaluator),
    };
  }

  /**
   * What the resync may write under `key`: as `accountFor`, but a grant's tuple only once the grant holds its
   * finalizer and has a status (its first reconcile is done). Before that, nothing guarantees that deleting
   * the grant removes the tuple again: a grant deleted before its first reconcile goes without one, and the
   * ACL API releases the finalizer of a grant it rolls back while no status is written (docs/controller.md,
   * "Finalizer from birth"). Its reconcile writes the tuple, finalizer first.
   */
  accountForWritable(key: TupleKey, evaluator: GrantEvaluator): Relationship | undefined {
    if (parseTupleKey(key).relation === OWNER_RELATION) return this.accountFor(key, evaluator);
    const enforced = evaluator.enforcedBy(key);
    const reconciled = enforced && hasFinalizer(enforced.grant) && enforced.grant.status !== undefined;
    return reconciled ? enforced.relationship : undefined;
  }

  /**
   * The relationship that some resource wants under `key` now (with its expiration), or undefined when no
   * grant or CatalogItem accounts for the tuple: it is then an orphan.
   */
  accountFor(key: TupleKey, evaluator: GrantEvaluator, excludedGrantKey?: string): Relationship | undefined {
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
