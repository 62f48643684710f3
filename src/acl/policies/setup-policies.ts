import { DEFAULT_CHECK_CALLERS } from '../../decision/check-callers.js';
import type { AclDeps } from '../acl-deps.js';
import { DEFAULT_CLAIM_PENDING_TIMEOUT_MS } from '../acl-config.js';
import { DEFAULT_CLAIM_WAIT_MS, PolicyCreator } from './create-policies.js';
import { GrantStore } from './grant-store.js';
import { PolicyListings } from './list-policies.js';
import { PolicyRevoker } from './revoke-policy.js';
import { AccessVerifier } from './verify-access.js';

/** The policies' part of the ACL API: grants written, revoked, listed and verified. */
export interface PolicyServices {
  store: GrantStore;
  creator: PolicyCreator;
  revoker: PolicyRevoker;
  listings: PolicyListings;
  verifier: AccessVerifier;
}

export function setupPolicies(deps: AclDeps): PolicyServices {
  const { config, kube, cache, now, readYourWriteTimeoutMs } = deps;
  const store = new GrantStore(kube, config.namespace);
  return {
    store,
    creator: new PolicyCreator(store, cache, {
      claimPendingTimeoutMs: config.claimPendingTimeoutMs ?? DEFAULT_CLAIM_PENDING_TIMEOUT_MS,
      claimWaitMs: DEFAULT_CLAIM_WAIT_MS,
      readYourWriteTimeoutMs,
      now,
    }),
    revoker: new PolicyRevoker(store, cache, { readYourWriteTimeoutMs, now }),
    listings: new PolicyListings(cache, now),
    verifier: new AccessVerifier(cache, now, {
      roles: config.decisionClientRoles ?? DEFAULT_CHECK_CALLERS.roles,
      serviceAccounts: [],
    }),
  };
}
