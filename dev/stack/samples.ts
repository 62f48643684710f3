import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  CATALOG_ITEM_KIND,
  CATALOG_ITEM_PLURAL,
  type CatalogItem,
} from '../../src/api/v1alpha1/index.js';
import { readManifests } from './manifests.js';

/** Creates (or leaves as they are) the CatalogItems found in the sample manifests; returns them. */
export async function applySampleCatalogItems(
  kubeConfig: KubeConfig,
  samplesDir: string,
): Promise<CatalogItem[]> {
  const items = (await readManifests(samplesDir)).filter(
    (object): object is CatalogItem => (object as { kind?: string }).kind === CATALOG_ITEM_KIND,
  );
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  for (const item of items) {
    try {
      await api.createClusterCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        plural: CATALOG_ITEM_PLURAL,
        body: item,
      });
    } catch (error) {
      if ((error as { code?: number }).code !== 409) throw error;
    }
  }
  return items;
}
