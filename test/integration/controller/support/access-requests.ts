import { randomUUID } from 'node:crypto';
import {
  ACCESS_REQUEST_KIND,
  ACCESS_REQUEST_RESOURCE,
  GROUP_VERSION,
  type AccessRequest,
} from '../../../../src/api/v1alpha1/index.js';
import { collectionPath, objectPath } from '../../../../src/kube/index.js';
import { testKubeClient } from '../../support/cluster.js';

/** AccessRequests of one namespace as kubectl writes them: without the ACL API. */
export class AccessRequestResources {
  private readonly kube = testKubeClient();

  constructor(private readonly namespace: string) {}

  private path(name: string, subresource?: 'status'): string {
    return objectPath(ACCESS_REQUEST_RESOURCE, { namespace: this.namespace, name }, subresource);
  }

  /** A request for api access to `itemId` (a new item id by default) by a new consumer, without a status. */
  async apply(itemId = `urn:dx:item:${randomUUID()}`): Promise<AccessRequest> {
    return this.kube.call<AccessRequest>({
      method: 'POST',
      path: collectionPath(ACCESS_REQUEST_RESOURCE, this.namespace),
      body: {
        apiVersion: GROUP_VERSION,
        kind: ACCESS_REQUEST_KIND,
        metadata: { generateName: 'request-' },
        spec: {
          consumerId: randomUUID(),
          itemId,
          itemType: 'DATABANK',
          access: [{ accessType: 'api' }],
          expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
        },
      },
    });
  }

  async get(name: string): Promise<AccessRequest> {
    return this.kube.call<AccessRequest>({ method: 'GET', path: this.path(name) });
  }

  /** Writes the status on the version read, as the ACL API decides. */
  async writeStatus(name: string, status: AccessRequest['status']): Promise<void> {
    const request = await this.get(name);
    await this.kube.call({ method: 'PUT', path: this.path(name, 'status'), body: { ...request, status } });
  }
}
