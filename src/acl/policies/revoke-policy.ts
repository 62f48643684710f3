import { toKubernetesTime, type PolicyGrant } from '../../api/v1alpha1/index.js';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { AclCache } from '../acl-cache.js';
import { lookupItem, mayRevoke } from '../authorisation.js';
import { claimKeys, claimName } from './grant-claims.js';
import type { GrantStore } from './grant-store.js';
import { isNotFound, isPreconditionConflict } from '../../kube/api-error.js';
import { isUserId } from './principal-ids.js';

const REVOKE_ATTEMPTS = 3;

export interface RevokeSettings {
  readYourWriteTimeoutMs: number;
  now: () => Date;
}

export type RevokeOutcome = { revoked: true } | { revoked: false; revokedAt: string };

/**
 * DELETE /policy: a soft delete. The grant stays (the record is kept for audit) with revokedAt and
 * revokedBy set by a merge patch conditioned on its resourceVersion; then its claims are released. A grant
 * already revoked is left exactly as it is, so a retried DELETE is harmless and the first revocation's
 * time and author stay on record.
 */
export class PolicyRevoker {
  constructor(
    private readonly store: GrantStore,
    private readonly cache: AclCache,
    private readonly settings: RevokeSettings,
  ) {}

  async revoke(principal: Principal, policyId: string, log: Logger): Promise<RevokeOutcome> {
    let grant = this.cache.grantByUid(policyId);
    if (!grant) throw notFound(policyId);
    const lookup = lookupItem(this.cache.itemsWithId(grant.spec.itemId));
    if (!mayRevoke(principal, grant, lookup.kind === 'found' ? lookup.item : undefined)) {
      // Names no item: the caller may not know which item the policy is on.
      throw new HttpError(
        'Forbidden',
        `only the issuer of policy ${policyId}, the owner of its item, an org_admin of the item's ` +
          `organisation or a cos_admin may delete it`,
      );
    }
    if (!isUserId(principal.id)) {
      throw new HttpError('Forbidden', `caller ${principal.id} has no user id to record as revokedBy`);
    }
    if (grant.metadata.namespace !== this.store.namespace) throw managedElsewhere(policyId, grant);
    for (let attempt = 0; attempt < REVOKE_ATTEMPTS; attempt++) {
      if (grant.spec.revokedAt !== undefined) return { revoked: false, revokedAt: grant.spec.revokedAt };
      try {
        const revoked = await this.store.revokeGrant(
          grant,
          toKubernetesTime(this.settings.now()),
          principal.id,
        );
        await this.releaseClaims(revoked, log);
        await this.awaitCache(revoked, log);
        return { revoked: true };
      } catch (error) {
        if (isNotFound(error)) throw notFound(policyId);
        if (!isPreconditionConflict(error)) throw error;
      }
      const current = await this.store.getGrant(grant.metadata.name ?? '', grant.metadata.namespace);
      if (!current || current.metadata.uid !== policyId) throw notFound(policyId);
      grant = current;
    }
    throw new HttpError('Conflict', `policy ${policyId} kept changing while it was being deleted; retry`);
  }

  /** Deletes the claims that name this grant (best effort: a claim left behind is vacant now anyway). */
  private async releaseClaims(grant: PolicyGrant, log: Logger): Promise<void> {
    if (grant.metadata.namespace !== this.store.namespace) return;
    const releases = claimKeys(grant.spec).map(async (key) => {
      const name = claimName(key);
      const claim = await this.store.getClaim(name);
      if (claim && claim.spec.grantName === grant.metadata.name) {
        await this.store.deleteClaim(name, claim.metadata.resourceVersion);
      }
    });
    const failed = (await Promise.allSettled(releases)).filter((result) => result.status === 'rejected');
    if (failed.length > 0)
      log.warn({ grant: grant.metadata.name, failed: failed.length }, 'claims not released');
  }

  private async awaitCache(grant: PolicyGrant, log: Logger): Promise<void> {
    const seen = await this.cache.waitForGrant(
      grant.metadata.namespace ?? '',
      grant.metadata.name ?? '',
      (cached) => cached.spec.revokedAt !== undefined,
      this.settings.readYourWriteTimeoutMs,
    );
    if (!seen) log.warn({ grant: grant.metadata.name }, 'revocation not yet in the cache');
  }
}

// A grant applied with kubectl lives in its Git repository: a revocation here would be undone by the next
// sync, and the API's RBAC rightly stops at its own namespace. Say where to revoke it instead.
function managedElsewhere(policyId: string, grant: PolicyGrant): HttpError {
  return new HttpError(
    'Conflict',
    `policy ${policyId} was applied in namespace ${grant.metadata.namespace} (GitOps), not through this ` +
      'API; revoke it where it is managed (set spec.revokedAt or remove the manifest)',
  );
}

function notFound(policyId: string): HttpError {
  return new HttpError('NotFound', `no policy has id ${policyId}`);
}
