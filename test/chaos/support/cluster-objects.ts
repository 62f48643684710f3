import type { KubeConfig } from '@kubernetes/client-node';
import {
  CATALOG_ITEM_RESOURCE,
  POLICY_GRANT_RESOURCE,
  type CatalogItem,
  type PolicyGrant,
  type ResourceDescriptor,
} from '../../../src/api/v1alpha1/index.js';
import { collectionPath, KubeClient } from '../../../src/kube/index.js';
import { SCOPE_LABEL } from '../../integration/controller/support/harness.js';

// Read from the kube-apiserver itself, not from anyone's cache.

/** The objects of the collection (a namespace's, or all matching `labelSelector`). */
export async function listObjects<T>(
  kubeConfig: KubeConfig,
  resource: ResourceDescriptor,
  where: { namespace: string } | { labelSelector: string },
): Promise<T[]> {
  const kube = new KubeClient(kubeConfig);
  try {
    const list = await kube.call<{ items: T[] }>({
      method: 'GET',
      path: collectionPath(resource, 'namespace' in where ? where.namespace : undefined),
      query: 'labelSelector' in where ? { labelSelector: where.labelSelector } : {},
    });
    return list.items;
  } finally {
    kube.close();
  }
}

/** Every PolicyGrant in the namespace. */
export function listGrants(kubeConfig: KubeConfig, namespace: string): Promise<PolicyGrant[]> {
  return listObjects(kubeConfig, POLICY_GRANT_RESOURCE, { namespace });
}

/** The CatalogItems of the test's scope. */
export function listItems(kubeConfig: KubeConfig, scope: string): Promise<CatalogItem[]> {
  return listObjects(kubeConfig, CATALOG_ITEM_RESOURCE, { labelSelector: `${SCOPE_LABEL}=${scope}` });
}
