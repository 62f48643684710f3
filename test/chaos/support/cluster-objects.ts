import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  CATALOG_ITEM_PLURAL,
  POLICY_GRANT_PLURAL,
  type CatalogItem,
  type PolicyGrant,
} from '../../../src/api/v1alpha1/index.js';
import { SCOPE_LABEL } from '../../integration/controller/support/harness.js';

// Read from the kube-apiserver itself, not from anyone's cache.

async function listCustomObjects<T>(
  kubeConfig: KubeConfig,
  plural: string,
  where: { namespace: string } | { labelSelector: string },
): Promise<T[]> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const request = { group: API_GROUP, version: API_VERSION, plural };
  const list =
    'namespace' in where
      ? await api.listNamespacedCustomObject({ ...request, ...where })
      : await api.listClusterCustomObject({ ...request, ...where });
  return (list as { items: T[] }).items;
}

/** Every PolicyGrant in the namespace. */
export function listGrants(kubeConfig: KubeConfig, namespace: string): Promise<PolicyGrant[]> {
  return listCustomObjects(kubeConfig, POLICY_GRANT_PLURAL, { namespace });
}

/** The CatalogItems of the test's scope. */
export function listItems(kubeConfig: KubeConfig, scope: string): Promise<CatalogItem[]> {
  return listCustomObjects(kubeConfig, CATALOG_ITEM_PLURAL, { labelSelector: `${SCOPE_LABEL}=${scope}` });
}
