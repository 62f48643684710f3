import {
  AGENT_KIND,
  agentName,
  delegationState,
  GROUP_VERSION,
  type Agent,
  type AgentSpec,
  type Delegation,
} from '../../api/v1alpha1/index.js';
import { HttpError } from '../../http/errors.js';
import type { AclCache } from '../acl-cache.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { isAlreadyExists, isNotFound, isPreconditionConflict } from '../../kube/api-error.js';
import { paths } from '../resources.js';

/** How often a claim re-reads an Agent that changed between its read and its write before giving up. */
const CLAIM_ATTEMPTS = 3;

export type AgentCache = Pick<AclCache, 'delegationsOf' | 'delegationsOfAgent'>;

export interface AgentOwnershipOptions {
  kube: KubeClient;
  cache: AgentCache;
  namespace: string;
  now: () => Date;
}

/** What the agent routes answer: the agent, its owner and whether cos_admin enrolled it. */
export type AgentRow = Required<AgentSpec>;

/**
 * Who an agent acts for (docs/acl-delegations.md, "Agents"). One owner per agent, held by the agent's Agent object,
 * whose name derives from the agent id so that the apiserver arbitrates every race on it:
 * - a user's first delegation of an agent nobody holds claims it;
 * - a claimed agent is released when its owner has no active delegation of it left, so a name taken and
 *   abandoned does not stay taken;
 * - cos_admin enrols an agent to a user (or transfers it), which pins it to that user, and deletes agents;
 *   either revokes every active delegation of the agent by anyone but its new owner, so a squatter's
 *   delegations never come back.
 * Every write carries the resourceVersion it decided on: a concurrent change makes it re-read, never overwrite.
 */
export class AgentOwnership {
  constructor(private readonly options: AgentOwnershipOptions) {}

  /** Makes `ownerId` the agent's owner, or finds it already is; 409 while another user holds the agent. */
  async claim(agentId: string, ownerId: string): Promise<void> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const agent = await this.read(agentId);
      if (agent?.spec.ownerId === ownerId) return;
      if (agent && !this.releasable(agent)) {
        throw new HttpError(
          'Conflict',
          `agent ${agentId} belongs to another user: an agent acts for one owner only`,
        );
      }
      if (await this.write(agent, { agentId, ownerId })) return;
    }
    throw new HttpError('Conflict', `agent ${agentId} changed during the claim: retry the request`);
  }

  /** cos_admin: enrols the agent to `ownerId` (creating or transferring it) and ends others' delegations. */
  async enrol(agentId: string, ownerId: string): Promise<AgentRow> {
    const spec = { agentId, ownerId, enrolled: true };
    const agent = await this.read(agentId);
    if (!(await this.write(agent, spec))) {
      throw new HttpError(
        'Conflict',
        `agent ${agentId} changed while it was being enrolled: retry the request`,
      );
    }
    await this.revokeDelegations(agentId, (delegation) => delegation.spec.ownerId !== ownerId);
    return spec;
  }

  /** cos_admin: deletes the agent and revokes its active delegations; 404 when no Agent holds the id. */
  async remove(agentId: string): Promise<void> {
    const { kube, namespace } = this.options;
    try {
      await kube.call({ method: 'DELETE', path: paths.agent(namespace, agentName(agentId)) });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      throw new HttpError('NotFound', `no agent has id ${agentId}`);
    }
    await this.revokeDelegations(agentId, () => true);
  }

  private async read(agentId: string): Promise<Agent | undefined> {
    const { kube, namespace } = this.options;
    try {
      return await kube.call<Agent>({ method: 'GET', path: paths.agent(namespace, agentName(agentId)) });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Creates the Agent, or replaces the one read at its resourceVersion; false when another write came first. */
  private async write(current: Agent | undefined, spec: AgentSpec): Promise<boolean> {
    const { kube, namespace } = this.options;
    const name = agentName(spec.agentId);
    const metadata = current ? { name, resourceVersion: current.metadata.resourceVersion } : { name };
    try {
      await kube.call({
        method: current ? 'PUT' : 'POST',
        path: current ? paths.agent(namespace, name) : paths.agents(namespace),
        body: { apiVersion: GROUP_VERSION, kind: AGENT_KIND, metadata, spec },
      });
      return true;
    } catch (error) {
      if (isAlreadyExists(error) || isPreconditionConflict(error) || isNotFound(error)) return false;
      throw error;
    }
  }

  /**
   * A claimed agent whose owner's delegations of it have all ended; an enrolled one never is. An agent with no
   * delegation of its owner at all is not: its claim was just written and the delegation it is for is on its
   * way (or failed, and garbage collection removes the unused Agent after its grace).
   */
  private releasable(agent: Agent): boolean {
    if (agent.spec.enrolled === true) return false;
    const now = this.options.now();
    const owned = this.options.cache
      .delegationsOf(agent.spec.ownerId)
      .filter((delegation) => delegation.spec.agentId === agent.spec.agentId);
    return owned.length > 0 && !owned.some((delegation) => isActive(delegation, now));
  }

  private async revokeDelegations(
    agentId: string,
    revoke: (delegation: Delegation) => boolean,
  ): Promise<void> {
    const { kube, namespace, cache } = this.options;
    const now = this.options.now();
    const ended = cache
      .delegationsOfAgent(agentId)
      .filter((delegation) => isActive(delegation, now) && revoke(delegation));
    for (const delegation of ended) {
      await kube.call({
        method: 'PATCH',
        path: paths.delegation(namespace, delegation.metadata.name ?? ''),
        body: { spec: { revokedAt: now.toISOString() } },
      });
    }
  }
}

function isActive(delegation: Delegation, now: Date): boolean {
  return delegationState(delegation.spec, now) === 'ACTIVE';
}
