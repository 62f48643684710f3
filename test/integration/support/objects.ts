import type { ResourceDescriptor } from '../../../src/api/v1alpha1/index.js';
import { collectionPath, objectPath, type KubeClient } from '../../../src/kube/index.js';
import { testKubeClient } from './cluster.js';

/** ConfigMaps: the built-in kind the runtime's tests watch and write (the product uses none). */
export const CONFIG_MAP_RESOURCE: ResourceDescriptor = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  namespaced: true,
};

/** Create, read, replace, list and delete of any kind, through the project's transport, as kubectl would. */
export class TestObjects {
  constructor(private readonly kube: KubeClient = testKubeClient()) {}

  create<T>(resource: ResourceDescriptor, body: unknown, namespace?: string): Promise<T> {
    return this.kube.call<T>({ method: 'POST', path: collectionPath(resource, namespace), body });
  }

  get<T>(resource: ResourceDescriptor, name: string, namespace?: string): Promise<T> {
    return this.kube.call<T>({ method: 'GET', path: objectPath(resource, { namespace, name }) });
  }

  replace<T>(resource: ResourceDescriptor, name: string, body: unknown, namespace?: string): Promise<T> {
    return this.kube.call<T>({ method: 'PUT', path: objectPath(resource, { namespace, name }), body });
  }

  async list<T>(resource: ResourceDescriptor, namespace?: string): Promise<T[]> {
    return (
      await this.kube.call<{ items: T[] }>({ method: 'GET', path: collectionPath(resource, namespace) })
    ).items;
  }

  async delete(resource: ResourceDescriptor, name: string, namespace?: string): Promise<void> {
    await this.kube.call({ method: 'DELETE', path: objectPath(resource, { namespace, name }) });
  }
}
