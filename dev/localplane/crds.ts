import type { KubeConfig, V1CustomResourceDefinition } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  collectionPath,
  CUSTOM_RESOURCE_DEFINITION_RESOURCE,
  isNotFound,
  KubeClient,
  objectPath,
} from '../../src/kube/index.js';
import { until } from '../wait/until.js';

const CRDS = CUSTOM_RESOURCE_DEFINITION_RESOURCE;

/** Creates or replaces every CRD in `dir` and waits until each is Established. */
export async function installCrds(
  kubeConfig: KubeConfig,
  dir: string,
  timeoutMs = 60_000,
): Promise<string[]> {
  const kube = new KubeClient(kubeConfig);
  try {
    const crds = await readCrds(dir);
    for (const crd of crds) await applyCrd(kube, crd);
    const names = crds.map((crd) => crd.metadata?.name as string);
    await Promise.all(names.map((name) => waitEstablished(kube, name, timeoutMs)));
    await Promise.all(crds.map((crd) => waitWatchable(kube, crd, timeoutMs)));
    return names;
  } finally {
    kube.close();
  }
}

async function readCrds(dir: string): Promise<V1CustomResourceDefinition[]> {
  const files = (await readdir(dir)).filter((file) => /\.ya?ml$/.test(file)).sort();
  const documents = await Promise.all(
    // Plain JSON as the files say it: client-node's loadAllYaml would turn the CRDs into its model classes,
    // whose property names (xKubernetesValidations) are not the wire's (x-kubernetes-validations).
    files.map(async (file) => loadAll(await readFile(join(dir, file), 'utf8'))),
  );
  return documents.flat().filter(Boolean) as V1CustomResourceDefinition[];
}

async function applyCrd(kube: KubeClient, crd: V1CustomResourceDefinition): Promise<void> {
  const path = objectPath(CRDS, { name: crd.metadata?.name as string });
  try {
    const existing = await kube.call<V1CustomResourceDefinition>({ method: 'GET', path });
    const body = {
      ...crd,
      metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion },
    };
    await kube.call({ method: 'PUT', path, body });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await kube.call({ method: 'POST', path: collectionPath(CRDS), body: crd });
  }
}

async function waitEstablished(kube: KubeClient, name: string, timeoutMs: number): Promise<void> {
  const established = async () => {
    const crd = await kube.call<V1CustomResourceDefinition>({
      method: 'GET',
      path: objectPath(CRDS, { name }),
    });
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  };
  await until(established, `CRD ${name} to be Established`, timeoutMs, 200);
}

/**
 * Established is not the end: until the API server's watch cache for the new resource is initialised,
 * watches answer 429. Tests and controllers would retry; waiting here keeps the first test honest.
 */
async function waitWatchable(kube: KubeClient, crd: V1CustomResourceDefinition, timeoutMs: number) {
  const { group, names, versions } = crd.spec;
  const path = collectionPath({
    group,
    version: versions[0]?.name ?? '',
    plural: names.plural,
    namespaced: false,
  });
  await until(() => answersWatch(kube, path), `a watch on ${path} to be accepted`, timeoutMs, 200);
}

/** Whether a watch on `path` is accepted (200); the stream is closed at once. */
async function answersWatch(kube: KubeClient, path: string): Promise<boolean> {
  const abort = new AbortController();
  try {
    const response = await kube.open({
      method: 'GET',
      path,
      query: { watch: true, timeoutSeconds: 1 },
      signal: abort.signal,
    });
    response.on('error', () => undefined); // the abort below ends it
    response.resume();
    return response.statusCode === 200;
  } catch {
    return false;
  } finally {
    abort.abort();
  }
}
