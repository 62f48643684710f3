import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { ListedObjects } from './listed-objects.js';
import { KubeClient } from '../kube/kube-client.js';
import { paths } from '../acl/resources.js';
import { KubeApiError } from '../kube/index.js';

// The objects the explanation reads, listed with the user's own kubeconfig: what their RBAC lets them read.

export interface ClusterRead {
  objects: ListedObjects;
  /** The lists the user may not read (403): the explanation is computed without them. */
  forbidden: string[];
}

/** Lists every kind the explanation reads; a list the user may not read counts as empty and is reported. */
export async function readClusterObjects(kubeConfig: KubeConfig, aclNamespace: string): Promise<ClusterRead> {
  const client = new KubeClient(kubeConfig);
  const forbidden: string[] = [];
  const list = async <T>(path: string): Promise<T[]> => {
    try {
      return (await client.call<{ items: T[] }>({ method: 'GET', path })).items;
    } catch (error) {
      if (error instanceof KubeApiError && error.statusCode === 403) {
        forbidden.push(path);
        return [];
      }
      throw error;
    }
  };
  try {
    const [grants, items, namespaces, memberships, delegations, agents] = await Promise.all([
      list<ListedObjects['grants'][number]>(paths.allPolicyGrants),
      list<ListedObjects['items'][number]>(paths.catalogItems),
      list<KubernetesObject>(paths.namespaces),
      list<ListedObjects['memberships'][number]>(paths.memberships(aclNamespace)),
      list<ListedObjects['delegations'][number]>(paths.delegations(aclNamespace)),
      list<ListedObjects['agents'][number]>(paths.agents(aclNamespace)),
    ]);
    return { objects: { grants, items, namespaces, memberships, delegations, agents }, forbidden };
  } finally {
    client.close();
  }
}
