import type { AclDeps } from '../acl-deps.js';
import type { AccessVerifier } from '../policies/verify-access.js';
import { AgentOwnership } from './agents.js';
import { Delegations } from './delegations.js';

/** The delegations' part of the ACL API: delegations, and the agents they are given to. */
export function setupDelegations(
  deps: AclDeps,
  verifier: AccessVerifier,
): { agents: AgentOwnership; delegations: Delegations } {
  const { config, kube, cache, now, readYourWriteTimeoutMs, quotas } = deps;
  const agents = new AgentOwnership({ kube, cache, namespace: config.namespace, now });
  const delegations = new Delegations({
    kube,
    cache,
    verifier,
    agents,
    quotas,
    namespace: config.namespace,
    now,
    readYourWriteTimeoutMs,
  });
  return { agents, delegations };
}
