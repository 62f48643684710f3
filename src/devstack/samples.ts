import { CustomObjectsApi, loadAllYaml, type KubeConfig } from '@kubernetes/client-node';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  API_GROUP,
  API_VERSION,
  CATALOG_ITEM_KIND,
  CATALOG_ITEM_PLURAL,
  type CatalogItem,
} from '../api/v1alpha1/index.js';

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

async function readManifests(dir: string): Promise<unknown[]> {
  const files = (await readdir(dir)).filter((file) => /\.ya?ml$/.test(file)).sort();
  const documents = await Promise.all(
    files.map(async (file) => loadAllYaml(await readFile(join(dir, file), 'utf8'))),
  );
  return documents.flat().filter(Boolean);
}
