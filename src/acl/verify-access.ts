import { derivedState, type CatalogItem, type PolicyGrant } from '../api/v1alpha1/index.js';
import type { Principal } from '../auth/principal.js';
import { authoriseNamespace } from '../verdict/namespace-authorisation.js';
import { HttpError, dependencyUnavailable } from '../http/errors.js';
import type { SpiceDBClient } from '../spicedb/client.js';
import { encodeObjectId } from '../spicedb/object-id.js';
import type { AclCache } from './acl-cache.js';
import { lookupItem, mayVerify } from './authorisation.js';
import { compareGrants, utcTimestamp } from './policy-rows.js';

export const SPICEDB_DEPENDENCY = 'spicedb';

/** Whether a user is a member of an organisation: a graph question for the relationship store. */
export interface MembershipOracle {
  isMember(organisationId: string, userId: string): Promise<boolean>;
}

/**
 * Asks SpiceDB `organization:<org>#member@user:<user>`, fully consistent: verify is the authoritative,
 * diagnostic answer (the hot path is the decision service), so a membership just removed must not count.
 * Any SpiceDB failure is a 503 naming spicedb: a GROUP grant is never counted on a guess.
 */
export function spicedbMembership(client: SpiceDBClient): MembershipOracle {
  return {
    async isMember(organisationId, userId) {
      try {
        const { allowed } = await client.checkPermission({
          resource: { type: 'organization', id: encodeObjectId(organisationId) },
          permission: 'member',
          subject: { type: 'user', id: encodeObjectId(userId) },
          consistency: { fullyConsistent: true },
        });
        return allowed;
      } catch (error) {
        throw dependencyUnavailable(SPICEDB_DEPENDENCY, error);
      }
    },
  };
}

export interface VerifyResult {
  id: string;
  constraints: PolicyGrant['spec']['constraints'];
  expiryAt: string;
}

/**
 * POST /verify: the user's active, unexpired grants on the item that count where they live (the ACL
 * namespace, or a namespace bound to the item's organisation: the controller's rule against kubectl
 * escalation): INDIVIDUAL grants to the user, and GROUP grants for whose allowed organisations SpiceDB says
 * the user is a member. None: a 403 Forbidden body.
 */
export class AccessVerifier {
  constructor(
    private readonly cache: AclCache,
    private readonly membership: MembershipOracle,
    private readonly aclNamespace: string,
    private readonly now: () => Date,
  ) {}

  async verify(principal: Principal, userId: string, itemId: string): Promise<VerifyResult[]> {
    const lookup = lookupItem(this.cache.itemsWithId(itemId));
    const item = lookup.kind === 'found' ? lookup.item : undefined;
    if (!mayVerify(principal, userId, item)) {
      throw new HttpError(
        'Forbidden',
        `only user ${userId}, the owner of item ${itemId}, an org_admin of its organisation, a cos_admin ` +
          `or an application may verify this access`,
        { title: 'Not allowed to verify' },
      );
    }
    const now = this.now();
    const counts = (grant: PolicyGrant) =>
      grant.spec.itemId === itemId &&
      derivedState(grant, now) === 'ACTIVE' &&
      this.placedRightly(grant, item);
    const individual = this.cache
      .grantsOfConsumer(userId, undefined)
      .filter((grant) => grant.spec.policyType === 'INDIVIDUAL' && counts(grant));
    const group = await this.groupGrantsOfMember(
      this.cache.grantsOnItem(itemId).filter((grant) => grant.spec.policyType === 'GROUP' && counts(grant)),
      userId,
    );
    const results = [...individual, ...group].sort(compareGrants).map((grant) => ({
      id: grant.metadata.uid ?? '',
      constraints: grant.spec.constraints,
      expiryAt: utcTimestamp(grant.spec.expiryTime),
    }));
    if (results.length === 0) {
      throw new HttpError('Forbidden', `user ${userId} has no active policy on item ${itemId}`, {
        title: 'No active policy',
      });
    }
    return results;
  }

  private placedRightly(grant: PolicyGrant, item: CatalogItem | undefined): boolean {
    const grantNamespace = grant.metadata.namespace ?? '';
    if (!item) return grantNamespace === this.aclNamespace;
    return authoriseNamespace({
      grantNamespace,
      aclNamespace: this.aclNamespace,
      namespaceOrganisation: this.cache.organisationOfNamespace(grantNamespace),
      itemOrganisation: item.spec.organisationId,
    }).authorised;
  }

  /** One membership question per organisation, asked at once. */
  private async groupGrantsOfMember(grants: PolicyGrant[], userId: string): Promise<PolicyGrant[]> {
    const organisations = [
      ...new Set(grants.flatMap((grant) => grant.spec.constraints.subjects?.allowedOrgIds ?? [])),
    ];
    const answers = await Promise.all(organisations.map((org) => this.membership.isMember(org, userId)));
    const memberOf = new Set(organisations.filter((_, index) => answers[index]));
    return grants.filter((grant) =>
      (grant.spec.constraints.subjects?.allowedOrgIds ?? []).some((org) => memberOf.has(org)),
    );
  }
}
