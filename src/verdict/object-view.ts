import type { KubernetesObject } from '@kubernetes/client-node';
import {
  isMember,
  membershipKeyString,
  type Agent,
  type CatalogItem,
  type Delegation,
  type Membership,
  type MembershipKey,
  type PolicyGrant,
} from '../api/v1alpha1/index.js';
import type { Registry } from '../spicedb/registry.js';
import type { ExplanationView } from './explanation.js';
import { ORGANISATION_LABEL } from './namespace-authorisation.js';
import { candidateTupleKeys } from './projection.js';
import type { TupleKey } from './tuple-key.js';

/** The objects a world is made of: what a client read from the cluster, or manifests from files. */
export interface WorldObjects {
  grants: readonly PolicyGrant[];
  items: readonly CatalogItem[];
  namespaces: readonly KubernetesObject[];
  memberships: readonly Membership[];
  delegations: readonly Delegation[];
  agents: readonly Agent[];
}

export const NO_OBJECTS: WorldObjects = {
  grants: [],
  items: [],
  namespaces: [],
  memberships: [],
  delegations: [],
  agents: [],
};

function groupBy<T>(values: readonly T[], keysOf: (value: T) => string[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const value of values) {
    for (const key of keysOf(value)) groups.set(key, [...(groups.get(key) ?? []), value]);
  }
  return groups;
}

/**
 * The verdict's world over lists of objects, indexed once: for a command-line tool or a CI run, which reads
 * (or parses) everything once and asks a few questions. Memberships, Delegations and Agents count only in the ACL
 * namespace, as the controller's and the ACL API's do.
 */
export class ObjectView implements ExplanationView {
  private readonly grantsByTuple: Map<string, PolicyGrant[]>;
  private readonly grantsByItem: Map<string, PolicyGrant[]>;
  private readonly itemsById: Map<string, CatalogItem[]>;
  private readonly membershipsByKey: Map<string, Membership[]>;
  private readonly delegationsByAgent: Map<string, Delegation[]>;

  constructor(
    readonly objects: WorldObjects,
    readonly aclNamespace: string,
    readonly registry: Registry,
  ) {
    this.grantsByTuple = groupBy(objects.grants, (grant) =>
      safeKeys(() => candidateTupleKeys(grant.spec, registry)),
    );
    this.grantsByItem = groupBy(objects.grants, (grant) => [grant.spec.itemId]);
    this.itemsById = groupBy(objects.items, (item) => [item.spec.itemId]);
    this.membershipsByKey = groupBy(
      objects.memberships.filter((membership) => membership.metadata.namespace === aclNamespace),
      (membership) => [membershipKeyString(membership.spec)],
    );
    this.delegationsByAgent = groupBy(
      objects.delegations.filter((delegation) => delegation.metadata.namespace === aclNamespace),
      (delegation) => [delegation.spec.agentId],
    );
  }

  itemsWithId(itemId: string): CatalogItem[] {
    return this.itemsById.get(itemId) ?? [];
  }

  organisationOfNamespace(namespace: string): string | undefined {
    const found = this.objects.namespaces.find((candidate) => candidate.metadata?.name === namespace);
    return found?.metadata?.labels?.[ORGANISATION_LABEL];
  }

  grantsWithTupleKey(key: TupleKey): PolicyGrant[] {
    return this.grantsByTuple.get(key) ?? [];
  }

  grantsOnItem(itemId: string): PolicyGrant[] {
    return this.grantsByItem.get(itemId) ?? [];
  }

  membership(key: MembershipKey): Membership | undefined {
    const candidates = this.membershipsByKey.get(membershipKeyString(key)) ?? [];
    return candidates.find(isMember) ?? candidates[0];
  }

  delegationsOfAgent(agentId: string): Delegation[] {
    return this.delegationsByAgent.get(agentId) ?? [];
  }

  /** The reader is whoever may read these objects (kubectl's RBAC decided): every membership is theirs to see. */
  disclosesMembership(_organisationId: string): boolean {
    return true;
  }

  agentOwner(agentId: string): string | undefined {
    return this.objects.agents.find(
      (agent) => agent.metadata.namespace === this.aclNamespace && agent.spec.agentId === agentId,
    )?.spec.ownerId;
  }
}

/** A malformed grant projects nothing rather than failing the whole world. */
function safeKeys(keys: () => string[]): string[] {
  try {
    return keys();
  } catch {
    return [];
  }
}
