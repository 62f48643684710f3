import type { KubernetesObject } from '@kubernetes/client-node';
import {
  ACCESS_REQUEST_RESOURCE,
  AGENT_RESOURCE,
  agentName,
  DELEGATION_RESOURCE,
  MEMBERSHIP_RESOURCE,
  type AccessRequest,
  type Agent,
  type Delegation,
  type Membership,
  type ResourceDescriptor,
} from '../../api/v1alpha1/index.js';
import {
  watchesMapped,
  type Informer,
  type Manager,
  type ReconcileResult,
  type Reconciler,
} from '../../runtime/index.js';
import {
  collectionPath,
  isConflict,
  isNotFound,
  objectPath,
  refOf,
  type KubeClient,
} from '../../kube/index.js';
import { accessRequestFinishedAt, delegationFinishedAt, membershipFinishedAt } from './finished-objects.js';

const DELETE_TIMEOUT_MS = 15_000;
/** Longest wait before an object is looked at again; timers cannot wait a 30-day retention in one go. */
const MAX_REQUEUE_MS = 60 * 60_000;
/**
 * How long an Agent without delegations must stay unchanged before it goes, at most: a claim precedes its
 * delegation by a moment. A shorter retention shortens it too (what finished is kept no longer than that).
 */
const MAX_AGENT_GRACE_MS = 5 * 60_000;
const BY_AGENT = 'garbageCollectionAgentId';

export interface GarbageCollectorDeps {
  /** The controller's transport to Kubernetes. */
  kube: KubeClient;
  aclNamespace: string;
  /** How long a finished object stays before it is deleted; its history stays in the audit trail. */
  retentionMs: number;
  now?: () => number;
  shutdownTimeoutMs?: number;
}

type Finished<T> = (object: T) => number | undefined;

/**
 * Garbage collection of what is finished in the ACL namespace (docs/controller.md, "Garbage collection"):
 * Delegations revoked or expired, AccessRequests decided or expired, and Memberships removed, each once
 * `retentionMs` has passed since it finished; and Agents that no Delegation names any more (claimed ones only:
 * an enrolled Agent stays). One controller per kind, so it runs only on the leader, with the manager's shared
 * informers: call it after the kinds' own setup (an informer keeps the transform of its first use). Each delete
 * carries the uid and resourceVersion it was decided on, so an object changed meanwhile (a member added back)
 * is kept and looked at again.
 */
export function setupGarbageCollector(manager: Manager, deps: GarbageCollectorDeps): void {
  const namespace = deps.aclNamespace;
  const delegations = manager.informer<Delegation>({ path: collectionPath(DELEGATION_RESOURCE, namespace) });
  delegations.addIndex(BY_AGENT, (delegation) => [delegation.spec.agentId]);
  const collect = <T extends KubernetesObject>(
    name: string,
    resource: ResourceDescriptor,
    finished: Finished<T>,
    informer = manager.informer<T>({ path: collectionPath(resource, namespace) }),
  ) =>
    manager.addController<T>({
      name: `garbage-collection-${name}`,
      for: informer,
      reconcile: collectAfterRetention(informer, resource, finished, deps),
      ...(deps.shutdownTimeoutMs === undefined ? {} : { shutdownTimeoutMs: deps.shutdownTimeoutMs }),
    });
  collect<Delegation>('delegation', DELEGATION_RESOURCE, delegationFinishedAt, delegations);
  collect<AccessRequest>('accessrequest', ACCESS_REQUEST_RESOURCE, accessRequestFinishedAt);
  collect<Membership>('membership', MEMBERSHIP_RESOURCE, membershipFinishedAt);
  const agents = manager.informer<Agent>({ path: collectionPath(AGENT_RESOURCE, namespace) });
  manager.addController<Agent>({
    name: 'garbage-collection-agent',
    for: agents,
    // An agent is looked at again when a delegation naming it changes or goes.
    watches: [
      watchesMapped(delegations, (delegation) => [`${namespace}/${agentName(delegation.spec.agentId)}`]),
    ],
    reconcile: collectUnusedAgents(agents, delegations, deps),
    ...(deps.shutdownTimeoutMs === undefined ? {} : { shutdownTimeoutMs: deps.shutdownTimeoutMs }),
  });
}

function collectAfterRetention<T extends KubernetesObject>(
  informer: Informer<T>,
  resource: ResourceDescriptor,
  finished: Finished<T>,
  deps: GarbageCollectorDeps,
): Reconciler {
  const now = deps.now ?? Date.now;
  return async (key, signal): Promise<ReconcileResult | undefined> => {
    const object = informer.get(key);
    if (!object || object.metadata?.deletionTimestamp) return;
    const at = finished(object);
    if (at === undefined) return;
    const due = at + deps.retentionMs - now();
    if (due > 0) return { requeueAfter: Math.min(due, MAX_REQUEUE_MS) };
    await deleteObject(deps.kube, resource, object, signal);
  };
}

/**
 * A claimed Agent that no Delegation names: deleted once it has stayed so, unchanged, for the grace. The
 * grace covers the moment between a claim and the delegation it is for; the resourceVersion precondition
 * covers a claim during the grace.
 */
function collectUnusedAgents(
  agents: Informer<Agent>,
  delegations: Informer<Delegation>,
  deps: GarbageCollectorDeps,
): Reconciler {
  const now = deps.now ?? Date.now;
  const graceMs = Math.min(MAX_AGENT_GRACE_MS, deps.retentionMs);
  const unusedSince = new Map<string, { resourceVersion: string | undefined; at: number }>();
  return async (key, signal): Promise<ReconcileResult | undefined> => {
    const agent = agents.get(key);
    if (
      !agent ||
      agent.spec.enrolled === true ||
      delegations.byIndex(BY_AGENT, agent.spec.agentId).length > 0
    ) {
      unusedSince.delete(key);
      return;
    }
    const { resourceVersion } = agent.metadata;
    const seen = unusedSince.get(key);
    if (seen === undefined || seen.resourceVersion !== resourceVersion) {
      unusedSince.set(key, { resourceVersion, at: now() });
      return { requeueAfter: graceMs };
    }
    const due = seen.at + graceMs - now();
    if (due > 0) return { requeueAfter: due };
    unusedSince.delete(key);
    await deleteObject(deps.kube, AGENT_RESOURCE, agent, signal);
  };
}

/** Deletes the object as it was decided on; gone already, or changed meanwhile (409), is no failure. */
async function deleteObject(
  kube: KubeClient,
  resource: ResourceDescriptor,
  object: KubernetesObject,
  signal: AbortSignal,
): Promise<void> {
  const { uid, resourceVersion } = object.metadata ?? {};
  try {
    await kube.call({
      method: 'DELETE',
      path: objectPath(resource, refOf(object)),
      body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid, resourceVersion } },
      timeoutMs: DELETE_TIMEOUT_MS,
      signal,
    });
  } catch (error) {
    if (!isNotFound(error) && !isConflict(error)) throw error;
  }
}
