import type { KubeConfig } from '@kubernetes/client-node';
import { CATALOG_ITEM_KIND, CATALOG_ITEM_RESOURCE, type CatalogItem } from '../../src/api/v1alpha1/index.js';
import { collectionPath, isAlreadyExists, KubeClient } from '../../src/kube/index.js';
import { readManifests } from './manifests.js';

/** Creates (or leaves as they are) the CatalogItems found in the sample manifests; returns them. */
export async function applySampleCatalogItems(
  kubeConfig: KubeConfig,
  samplesDir: string,
): Promise<CatalogItem[]> {
  const items = (await readManifests(samplesDir)).filter(
    (object): object is CatalogItem => (object as { kind?: string }).kind === CATALOG_ITEM_KIND,
  );
  const kube = new KubeClient(kubeConfig);
  try {
    for (const item of items) {
      await kube
        .call({ method: 'POST', path: collectionPath(CATALOG_ITEM_RESOURCE), body: item })
        .catch((error: unknown) => {
          if (!isAlreadyExists(error)) throw error;
        });
    }
  } finally {
    kube.close();
  }
  return items;
}
