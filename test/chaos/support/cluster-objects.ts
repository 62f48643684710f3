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

/** Every PolicyGrant in the namespace, read from the kube-apiserver (not from anyone's cache). */
export async function listGrants(kubeConfig: KubeConfig, namespace: string): Promise<PolicyGrant[]> {
  const list = (await kubeConfig.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: POLICY_GRANT_PLURAL,
  })) as { items: PolicyGrant[] };
  return list.items;
}

/** The CatalogItems of the test's scope. */
export async function listItems(kubeConfig: KubeConfig, scope: string): Promise<CatalogItem[]> {
  const list = (await kubeConfig.makeApiClient(CustomObjectsApi).listClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: CATALOG_ITEM_PLURAL,
    labelSelector: `${SCOPE_LABEL}=${scope}`,
  })) as { items: CatalogItem[] };
  return list.items;
}
