import { KubeApiError } from '../../../../src/runtime/api-error.js';
import type { Lease, LeaseClient, LeaseSpec } from '../../../../src/runtime/lease-client.js';

/** One Lease with the API server's optimistic concurrency; each client can be cut off from it. */
export class FakeLeaseStore {
  lease?: Lease;
  private revision = 0;
  readonly writes: LeaseSpec[] = [];

  client(): LeaseClient & { reachable: boolean } {
    const reach = (): void => {
      if (!client.reachable) {
        throw new Error('connect ECONNREFUSED');
      }
    };
    const client = {
      reachable: true,
      get: async () => {
        reach();
        return this.lease ? structuredClone(this.lease) : undefined;
      },
      create: async (spec: LeaseSpec) => {
        reach();
        if (this.lease) {
          throw new KubeApiError(409, 'AlreadyExists', 'leases "l" already exists');
        }
        return this.write({ metadata: { name: 'l', namespace: 'ns' }, spec });
      },
      update: async (lease: Lease) => {
        reach();
        if (lease.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) {
          throw new KubeApiError(409, 'Conflict', 'the object has been modified');
        }
        return this.write(lease);
      },
    };
    return client;
  }

  holder(): string | undefined {
    return this.lease?.spec?.holderIdentity;
  }

  private write(lease: Lease): Lease {
    this.revision += 1;
    this.lease = structuredClone({
      ...lease,
      metadata: { ...lease.metadata, resourceVersion: String(this.revision) },
    });
    this.writes.push(structuredClone(lease.spec ?? {}));
    return structuredClone(this.lease);
  }
}
