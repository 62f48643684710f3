import { randomUUID } from 'node:crypto';
import {
  AGENT_KIND,
  AGENT_RESOURCE,
  agentName,
  DELEGATION_KIND,
  DELEGATION_RESOURCE,
  GROUP_VERSION,
  type Delegation,
  type DelegationSpec,
} from '../../../../src/api/v1alpha1/index.js';
import type { SpiceDBClient } from '../../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { uniqueId } from '../../support/cluster.js';
import { TestObjects } from '../../support/objects.js';
import { exists, untilReason } from './harness.js';

/** Delegations and Agents of one namespace, as a GitOps user (or the ACL API) writes them. */
export class DelegationResources {
  private readonly objects = new TestObjects();

  constructor(private readonly namespace: string) {}

  /** The Agent object that makes `ownerId` the agent's one owner. */
  async claimAgent(agentId: string, ownerId: string): Promise<void> {
    const body = {
      apiVersion: GROUP_VERSION,
      kind: AGENT_KIND,
      metadata: { name: agentName(agentId) },
      spec: { agentId, ownerId },
    };
    await this.objects.create(AGENT_RESOURCE, body, this.namespace);
  }

  async create(spec: DelegationSpec): Promise<string> {
    const name = uniqueId('delegation');
    const body = { apiVersion: GROUP_VERSION, kind: DELEGATION_KIND, metadata: { name }, spec };
    await this.objects.create(DELEGATION_RESOURCE, body, this.namespace);
    return name;
  }

  async get(name: string): Promise<Delegation> {
    return this.objects.get<Delegation>(DELEGATION_RESOURCE, name, this.namespace);
  }

  async revoke(name: string): Promise<void> {
    const current = await this.get(name);
    const body = { ...current, spec: { ...current.spec, revokedAt: new Date().toISOString() } };
    await this.objects.replace(DELEGATION_RESOURCE, name, body, this.namespace);
  }

  async delete(name: string): Promise<void> {
    await this.objects.delete(DELEGATION_RESOURCE, name, this.namespace);
  }

  async exists(name: string): Promise<boolean> {
    return exists(this.get(name));
  }

  async agentExists(agentId: string): Promise<boolean> {
    return exists(this.objects.get(AGENT_RESOURCE, agentName(agentId), this.namespace));
  }

  waitForReason(name: string, reason: string): Promise<Delegation> {
    return untilReason(`${this.namespace}/${name}`, () => this.get(name), reason);
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
