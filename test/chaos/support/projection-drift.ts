import type { KubernetesObject } from '@kubernetes/client-node';
import type { CatalogItem, PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import { ClusterView } from '../../../src/controller/cluster-view.js';
import { managedRelations } from '../../../src/controller/managed-relations.js';
import { tupleKey, type TupleKey } from '../../../src/verdict/tuple-key.js';
import { indexerOf } from '../../../src/runtime/indexed-cache.js';
import type { Relationship, SpiceDBClient } from '../../../src/spicedb/client.js';
import type { Registry } from '../../../src/spicedb/registry.js';

export interface ProjectionInput {
  grants: readonly PolicyGrant[];
  items: readonly CatalogItem[];
  aclNamespace: string;
  registry: Registry;
  now: Date;
}

/** Tuple key → expiration (ms, undefined for none) of every relationship the resources want. */
export type TupleExpirations = Map<TupleKey, number | undefined>;

/**
 * What SpiceDB must hold according to the custom resources, computed by the controller's own code (verdicts,
 * conflicts, projection, owners): the tuples of every grant it would enforce now, and of every CatalogItem.
 * All grants live in the ACL namespace, so no namespace binding is needed.
 */
export function effectiveProjection(input: ProjectionInput): TupleExpirations {
  const cluster = new ClusterView({
    grants: indexerOf(input.grants),
    items: indexerOf(input.items),
    namespaces: indexerOf<KubernetesObject>([]),
    registry: input.registry,
    aclNamespace: input.aclNamespace,
  });
  const wanted: TupleExpirations = new Map();
  const want = (relationship: Relationship) =>
    wanted.set(tupleKey(relationship), relationship.expiresAt?.getTime());
  const evaluator = cluster.evaluator(input.now);
  for (const grant of cluster.allGrants()) {
    const verdict = evaluator.evaluate(grant);
    if (verdict.enforce) verdict.relationships.forEach(want);
  }
  for (const itemId of new Set(cluster.allItems().map((item) => item.spec.itemId))) {
    cluster.ownersOf(itemId).forEach(want);
  }
  return wanted;
}

/** Every relationship of the relations the controller manages, read fully consistent. */
export async function managedTuples(client: SpiceDBClient, registry: Registry): Promise<TupleExpirations> {
  const found: TupleExpirations = new Map();
  for (const { objectType, relation } of managedRelations(registry)) {
    const pages = client.readRelationships(
      { resourceType: objectType, relation },
      { consistency: { fullyConsistent: true } },
    );
    for await (const page of pages) {
      for (const relationship of page.relationships) {
        found.set(tupleKey(relationship), relationship.expiresAt?.getTime());
      }
    }
  }
  return found;
}

export interface Drift {
  /** Wanted, absent from SpiceDB. */
  missing: TupleKey[];
  /** In SpiceDB, wanted by nothing. */
  orphan: TupleKey[];
  /** In both, with another expiration. */
  misdated: TupleKey[];
}

export function compareTuples(wanted: TupleExpirations, actual: TupleExpirations): Drift {
  const keys = (map: TupleExpirations, keep: (key: TupleKey) => boolean) =>
    [...map.keys()].filter(keep).sort();
  return {
    missing: keys(wanted, (key) => !actual.has(key)),
    orphan: keys(actual, (key) => !wanted.has(key)),
    misdated: keys(wanted, (key) => actual.has(key) && actual.get(key) !== wanted.get(key)),
  };
}
