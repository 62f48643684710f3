import type { AclDeps } from '../acl-deps.js';
import type { PolicyServices } from '../policies/setup-policies.js';
import { AccessRequests } from './access-requests.js';

/** The access requests' part of the ACL API: a request approved becomes a grant through the policies' creator. */
export function setupAccessRequests(deps: AclDeps, policies: PolicyServices): AccessRequests {
  const { config, kube, cache, now, readYourWriteTimeoutMs, quotas } = deps;
  return new AccessRequests({
    kube,
    cache,
    creator: policies.creator,
    grants: policies.store,
    verifier: policies.verifier,
    quotas,
    namespace: config.namespace,
    now,
    readYourWriteTimeoutMs,
  });
}
