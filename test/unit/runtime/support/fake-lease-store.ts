import { KubeApiError } from '../../../../src/kube/api-error.js';
import type { Lease, LeaseClient, LeaseSpec } from '../../../../src/kube/lease-client.js';
import { sleep } from '../../../../src/runtime/timing.js';

/** Faults a test can inject into one client's requests. */
export interface FaultControls {
  /** false: every request fails at once (connection refused). */
  reachable: boolean;
  /** true: every request hangs until its signal aborts. */
  hanging: boolean;
  /** Every request waits this long first. */
  latencyMs: number;
  /** So many updates fail with a 500 after passing the optimistic check. */
  failUpdates: number;
}

/** One Lease with the API server's optimistic concurrency; each client can be cut off from it. */
export class FakeLeaseStore {
  lease?: Lease;
  /** Updates refused with 409 because the resourceVersion was not current. */
  conflicts = 0;
  private revision = 0;
  readonly writes: LeaseSpec[] = [];

  client(): LeaseClient & FaultControls {
    const reach = async (signal?: AbortSignal): Promise<void> => {
      if (client.latencyMs > 0) {
        await sleep(client.latencyMs);
      }
      if (client.hanging) {
        // A request that never answers: only its signal (the attempt's timeout) ends it.
        await new Promise((_resolve, reject) =>
          signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        );
      }
      if (!client.reachable) {
        throw new Error('connect ECONNREFUSED');
      }
    };
    const client = {
      reachable: true,
      hanging: false,
      latencyMs: 0,
      failUpdates: 0,
      get: async (signal?: AbortSignal) => {
        await reach(signal);
        return this.lease ? structuredClone(this.lease) : undefined;
      },
      create: async (spec: LeaseSpec, signal?: AbortSignal) => {
        await reach(signal);
        if (this.lease) {
          throw new KubeApiError(409, 'AlreadyExists', 'leases "l" already exists');
        }
        return this.write({ metadata: { name: 'l', namespace: 'ns' }, spec });
      },
      update: async (lease: Lease, signal?: AbortSignal) => {
        await reach(signal);
        if (lease.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) {
          this.conflicts += 1;
          throw new KubeApiError(409, 'Conflict', 'the object has been modified');
        }
        if (client.failUpdates > 0) {
          client.failUpdates -= 1;
          throw new KubeApiError(500, 'InternalError', 'etcdserver: request timed out');
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
