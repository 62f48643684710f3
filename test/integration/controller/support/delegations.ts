import { randomUUID } from 'node:crypto';
import { CustomObjectsApi } from '@kubernetes/client-node';
import {
  AGENT_KIND,
  AGENT_PLURAL,
  agentName,
  API_GROUP,
  API_VERSION,
  DELEGATION_KIND,
  DELEGATION_PLURAL,
  GROUP_VERSION,
  type Delegation,
  type DelegationSpec,
} from '../../../../src/api/v1alpha1/index.js';
import type { SpiceDBClient } from '../../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { testKubeConfig, uniqueId } from '../../support/cluster.js';
import { untilReason } from './harness.js';

/** Delegations and Agents of one namespace, as a GitOps user (or the ACL API) writes them. */
export class DelegationResources {
  private readonly api = testKubeConfig().makeApiClient(CustomObjectsApi);

  constructor(private readonly namespace: string) {}

  /** The Agent object that makes `ownerId` the agent's one owner. */
  async claimAgent(agentId: string, ownerId: string): Promise<void> {
    await this.api.createNamespacedCustomObject({
      ...this.collection(AGENT_PLURAL),
      body: {
        apiVersion: GROUP_VERSION,
        kind: AGENT_KIND,
        metadata: { name: agentName(agentId) },
        spec: { agentId, ownerId },
      },
    });
  }

  async create(spec: DelegationSpec): Promise<string> {
    const name = uniqueId('delegation');
    await this.api.createNamespacedCustomObject({
      ...this.collection(DELEGATION_PLURAL),
      body: { apiVersion: GROUP_VERSION, kind: DELEGATION_KIND, metadata: { name }, spec },
    });
    return name;
  }

  async get(name: string): Promise<Delegation> {
    return (await this.api.getNamespacedCustomObject({
      ...this.collection(DELEGATION_PLURAL),
      name,
    })) as Delegation;
  }

  async revoke(name: string): Promise<void> {
    const current = await this.get(name);
    await this.api.replaceNamespacedCustomObject({
      ...this.collection(DELEGATION_PLURAL),
      name,
      body: { ...current, spec: { ...current.spec, revokedAt: new Date().toISOString() } },
    });
  }

  async delete(name: string): Promise<void> {
    await this.api.deleteNamespacedCustomObject({ ...this.collection(DELEGATION_PLURAL), name });
  }

  async exists(name: string): Promise<boolean> {
    return this.get(name).then(
      () => true,
      (error: { code?: number }) => {
        if (error.code === 404) return false;
        throw error;
      },
    );
  }

  waitForReason(name: string, reason: string): Promise<Delegation> {
    return untilReason(`${this.namespace}/${name}`, () => this.get(name), reason);
  }

  private collection(plural: string) {
    return { group: API_GROUP, version: API_VERSION, namespace: this.namespace, plural };
  }
}

/** A querier delegation of the item to a new agent by `ownerId`, for a day. */
export function querierDelegation(itemId: string, ownerId: string, extra: Partial<DelegationSpec> = {}) {
  return {
    agentId: `urn:dx:agent:${randomUUID()}`,
    ownerId,
    itemId,
    relation: 'querier' as const,
    expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
    ...extra,
  };
}

/** Whether the agent is allowed `permission` on the item, at least as fresh as `zedToken` (else fully consistent). */
export async function agentCan(
  client: SpiceDBClient,
  itemId: string,
  permission: string,
  agentId: string,
  zedToken?: string,
): Promise<boolean> {
  const { allowed } = await client.checkPermission({
    resource: { type: 'resource', id: encodeObjectId(itemId) },
    permission,
    subject: { type: 'agent', id: encodeObjectId(agentId) },
    consistency: zedToken ? { atLeastAsFresh: zedToken } : { fullyConsistent: true },
  });
  return allowed;
}
