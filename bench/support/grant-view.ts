import type { KubernetesObject } from '@kubernetes/client-node';
import type { PolicyGrant } from '../../src/api/v1alpha1/index.js';
import { ClusterView } from '../../src/controller/cluster-view.js';
import type { Indexer } from '../../src/kube/indexes.js';
import { stripForCache } from '../../src/runtime/index.js';
import { loadRegistry } from '../../src/spicedb/registry.js';
import { staticInformer } from './static-informer.js';
import { ACL_NAMESPACE, itemIdOf, SYNTHETIC_ITEMS, syntheticCatalogItem } from './synthetic-grant.js';

/**
 * The controller's indexes over a cache of synthetic grants: a ClusterView with their catalogue. Fails unless
 * every grant is indexed by its item.
 */
export async function indexSyntheticGrants(
  grants: Indexer<PolicyGrant>,
  count: number,
): Promise<{ view: ClusterView; stop: () => Promise<void> }> {
  const items = await staticInformer(SYNTHETIC_ITEMS, syntheticCatalogItem, stripForCache);
  const namespaces = await staticInformer<KubernetesObject>(0, () => ({}), stripForCache);
  const view = new ClusterView({
    grants,
    items,
    namespaces,
    registry: loadRegistry(),
    aclNamespace: ACL_NAMESPACE,
  });
  if (view.grantsOnItem(itemIdOf(0)).length !== Math.ceil(count / SYNTHETIC_ITEMS))
    throw new Error('grants went missing');
  return { view, stop: async () => void (await Promise.all([items.stop(), namespaces.stop()])) };
}
