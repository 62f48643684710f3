import {
  ApiextensionsV1Api,
  Watch,
  loadAllYaml,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { delay } from './managed-process.js';

/** Creates or replaces every CRD in `dir` and waits until each is Established. */
export async function installCrds(
  kubeConfig: KubeConfig,
  dir: string,
  timeoutMs = 60_000,
): Promise<string[]> {
  const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
  const crds = await readCrds(dir);
  for (const crd of crds) await applyCrd(api, crd);
  const names = crds.map((crd) => crd.metadata?.name as string);
  await Promise.all(names.map((name) => waitEstablished(api, name, timeoutMs)));
  await Promise.all(crds.map((crd) => waitWatchable(kubeConfig, crd, timeoutMs)));
  return names;
}

async function readCrds(dir: string): Promise<V1CustomResourceDefinition[]> {
  const files = (await readdir(dir)).filter((file) => /\.ya?ml$/.test(file)).sort();
  const documents = await Promise.all(
    files.map(async (file) => loadAllYaml(await readFile(join(dir, file), 'utf8'))),
  );
  return documents.flat().filter(Boolean) as V1CustomResourceDefinition[];
}

async function applyCrd(api: ApiextensionsV1Api, crd: V1CustomResourceDefinition): Promise<void> {
  const name = crd.metadata?.name as string;
  try {
    const existing = await api.readCustomResourceDefinition({ name });
    const body = {
      ...crd,
      metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion },
    };
    await api.replaceCustomResourceDefinition({ name, body });
  } catch (error) {
    if ((error as { code?: number }).code !== 404) throw error;
    await api.createCustomResourceDefinition({ body: crd });
  }
}

async function waitEstablished(api: ApiextensionsV1Api, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const crd = await api.readCustomResourceDefinition({ name });
    const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    if (established) return;
    await delay(200);
  }
  throw new Error(`CRD ${name} was not Established within ${timeoutMs} ms`);
}

/**
 * Established is not the end: until the API server's watch cache for the new resource is initialised,
 * watches answer 429. Tests and controllers would retry; waiting here keeps the first test honest.
 */
async function waitWatchable(kubeConfig: KubeConfig, crd: V1CustomResourceDefinition, timeoutMs: number) {
  const { group, names, versions } = crd.spec;
  const path = `/apis/${group}/${versions[0]?.name}/${names.plural}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const watching = await new Watch(kubeConfig)
      .watch(
        path,
        { timeoutSeconds: 1 },
        () => undefined,
        () => undefined,
      )
      .then((request) => (request.abort(), true))
      .catch(() => false);
    if (watching) return;
    await delay(200);
  }
  throw new Error(`watching ${path} did not work within ${timeoutMs} ms`);
}
