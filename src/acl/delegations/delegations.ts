import {
  DELEGATION_KIND,
  delegationState,
  ENFORCED_CONDITION,
  findStatusCondition,
  GROUP_VERSION,
  type Delegation,
} from '../../api/v1alpha1/index.js';
import type { Principal } from '../../auth/principal.js';
import type { PaginationInfo } from '../../http/envelope.js';
import { HttpError } from '../../http/errors.js';
import type { AclCache } from '../acl-cache.js';
import { assertIsUser } from '../authorisation.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { compareGrants, utcTimestamp, type Page } from '../policies/policy-rows.js';
import type { AccessVerifier } from '../policies/verify-access.js';
import { untilCached } from '../read-your-write.js';
import { paths } from '../resources.js';
import { assertBelowQuota, type UserQuotas } from '../user-quotas.js';
import type { AgentOwnership } from './agents.js';
import type { CreateDelegationBody, DelegationRow } from './delegation-schemas.js';

export type DelegationCache = Pick<AclCache, 'delegationByUid' | 'delegationsOf' | 'itemsWithId'>;

export interface DelegationsOptions {
  kube: KubeClient;
  cache: DelegationCache;
  verifier: Pick<AccessVerifier, 'verify'>;
  agents: Pick<AgentOwnership, 'claim'>;
  quotas: UserQuotas;
  namespace: string;
  now: () => Date;
  /** How long a create or revoke waits for the cache to show it, so that the caller's next GET does. */
  readYourWriteTimeoutMs: number;
}

/**
 * The delegation lifecycle of the ACL API (docs/acl-delegations.md, "Delegations"): a user delegates access to an
 * agent, lists and revokes their own delegations. One owner per agent (agents.ts): a delegation of an agent
 * another user holds is a 409.
 */
export class Delegations {
  constructor(private readonly options: DelegationsOptions) {}

  async create(principal: Principal, body: CreateDelegationBody): Promise<string> {
    assertIsUser(principal, 'delegate access to an agent');
    if (body.relation === 'querier') this.assertHoldsApi(principal, body.itemId);
    this.assertInCatalog(body.itemId);
    this.assertWithinQuotas(principal.id, body.agentId);
    await this.options.agents.claim(body.agentId, principal.id);
    const created = await this.options.kube.call<Delegation>({
      method: 'POST',
      path: paths.delegations(this.options.namespace),
      body: {
        apiVersion: GROUP_VERSION,
        kind: DELEGATION_KIND,
        metadata: { generateName: 'delegation-' },
        spec: { ...body, ownerId: principal.id },
      },
    });
    const uid = created.metadata.uid ?? '';
    await this.untilCached(uid, () => true);
    return uid;
  }

  list(principal: Principal, page: Page): { results: DelegationRow[]; paginationInfo: PaginationInfo } {
    const ordered = [...this.options.cache.delegationsOf(principal.id)].sort(compareGrants);
    return {
      results: ordered.slice(page.offset, page.offset + page.limit).map((delegation) => this.row(delegation)),
      paginationInfo: { offset: page.offset, limit: page.limit, totalHits: ordered.length },
    };
  }

  get(principal: Principal, id: string): DelegationRow {
    return this.row(this.ownDelegation(principal, id));
  }

  /** Soft delete: sets spec.revokedAt (the record stays); revoking a revoked delegation changes nothing. */
  async revoke(principal: Principal, id: string): Promise<void> {
    const delegation = this.ownDelegation(principal, id);
    if (delegation.spec.revokedAt !== undefined) return;
    await this.options.kube.call({
      method: 'PATCH',
      path: paths.delegation(this.options.namespace, delegation.metadata.name ?? ''),
      body: { spec: { revokedAt: this.options.now().toISOString() } },
    });
    await this.untilCached(id, (cached) => cached.spec.revokedAt !== undefined);
  }

  private ownDelegation(principal: Principal, id: string): Delegation {
    const delegation = this.options.cache.delegationByUid(id);
    if (!delegation) throw new HttpError('NotFound', `no delegation has id ${id}`);
    if (delegation.spec.ownerId !== principal.id) {
      throw new HttpError(
        'Forbidden',
        `delegation ${id} is not the caller's: only the delegating user may see or revoke it`,
      );
    }
    return delegation;
  }

  /** Delegations are for the catalog's items only: an id nothing describes would be an object about nothing. */
  private assertInCatalog(itemId: string): void {
    if (this.options.cache.itemsWithId(itemId).length === 0) {
      throw new HttpError(
        'NotFound',
        `no catalog item has itemId ${itemId}: delegations are for catalog items only`,
      );
    }
  }

  /** One more delegation, and an agent the caller does not delegate yet, must stay within the caller's quotas. */
  private assertWithinQuotas(ownerId: string, agentId: string): void {
    const { cache, quotas } = this.options;
    const held = cache.delegationsOf(ownerId);
    assertBelowQuota(quotas, 'delegations', held.length);
    const agents = new Set(held.map((delegation) => delegation.spec.agentId));
    if (!agents.has(agentId)) assertBelowQuota(quotas, 'agents', agents.size);
  }

  /** Querier is the api access type: the caller must hold an effective api policy on the item now. */
  private assertHoldsApi(principal: Principal, itemId: string): void {
    try {
      this.options.verifier.verify(principal, principal.id, itemId);
    } catch (error) {
      if (!(error instanceof HttpError) || error.kind !== 'Forbidden') throw error;
      throw new HttpError(
        'Forbidden',
        `the caller holds no active api policy on item ${itemId}, so has no querier access to delegate`,
      );
    }
  }

  private row(delegation: Delegation): DelegationRow {
    const { spec, metadata } = delegation;
    const condition = findStatusCondition(delegation.status?.conditions ?? [], ENFORCED_CONDITION);
    return {
      delegationId: metadata.uid ?? '',
      agentId: spec.agentId,
      itemId: spec.itemId,
      relation: spec.relation,
      status: delegationState(spec, this.options.now()),
      enforced: condition?.status === 'True' && condition.observedGeneration === metadata.generation,
      expiryAt: utcTimestamp(spec.expiryTime),
      ...(spec.revokedAt === undefined ? {} : { revokedAt: utcTimestamp(spec.revokedAt) }),
    };
  }

  /** Waits (bounded) until the cache holds the delegation in a state that satisfies `seen`. */
  private async untilCached(uid: string, seen: (delegation: Delegation) => boolean): Promise<void> {
    const { cache, readYourWriteTimeoutMs } = this.options;
    await untilCached(() => {
      const cached = cache.delegationByUid(uid);
      return cached !== undefined && seen(cached);
    }, readYourWriteTimeoutMs);
  }
}
