import { randomUUID } from 'node:crypto';
import { CustomObjectsApi } from '@kubernetes/client-node';
import {
  ACCESS_REQUEST_KIND,
  ACCESS_REQUEST_PLURAL,
  API_GROUP,
  API_VERSION,
  GROUP_VERSION,
  type AccessRequest,
} from '../../../../src/api/v1alpha1/index.js';
import { testKubeConfig } from '../../support/cluster.js';

/** AccessRequests of one namespace as kubectl writes them: without the ACL API. */
export class AccessRequestResources {
  private readonly api = testKubeConfig().makeApiClient(CustomObjectsApi);

  constructor(private readonly namespace: string) {}

  private get where() {
    return {
      group: API_GROUP,
      version: API_VERSION,
      namespace: this.namespace,
      plural: ACCESS_REQUEST_PLURAL,
    };
  }

  /** A request for api access to `itemId` (a new item id by default) by a new consumer, without a status. */
  async apply(itemId = `urn:dx:item:${randomUUID()}`): Promise<AccessRequest> {
    return (await this.api.createNamespacedCustomObject({
      ...this.where,
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
    })) as AccessRequest;
  }

  async get(name: string): Promise<AccessRequest> {
    return (await this.api.getNamespacedCustomObject({ ...this.where, name })) as AccessRequest;
  }

  /** Writes the status on the version read, as the ACL API decides. */
  async writeStatus(name: string, status: AccessRequest['status']): Promise<void> {
    const request = await this.get(name);
    await this.api.replaceNamespacedCustomObjectStatus({ ...this.where, name, body: { ...request, status } });
  }
}
