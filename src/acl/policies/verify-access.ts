import type { PolicyGrant } from '../../api/v1alpha1/index.js';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import { GrantEvaluator } from '../../verdict/grant-verdict.js';
import type { AclCache } from '../acl-cache.js';
import { lookupItem, mayVerify } from '../authorisation.js';
import type { CheckCallers } from '../../decision/check-callers.js';
import { compareGrants, utcTimestamp } from './policy-rows.js';

export interface VerifyResult {
  id: string;
  constraints: PolicyGrant['spec']['constraints'];
  expiryAt: string;
}

export interface Verification {
  /** The effective grant that expires last (the oldest of those expiring together). */
  latest: VerifyResult;
  /** Every effective grant, in listing order. */
  all: VerifyResult[];
}

/** What verify reads: the verdict's view and the Membership cache. */
export type VerifyCache = Pick<
  AclCache,
  | 'aclNamespace'
  | 'registry'
  | 'itemsWithId'
  | 'organisationOfNamespace'
  | 'grantsWithTupleKey'
  | 'grantsOfConsumer'
  | 'grantsOnItem'
  | 'isOrganisationMember'
>;

/**
 * POST /verify: the user's effective grants on the item (the verdict the controller enforces, see
 * src/verdict/grant-verdict.ts): INDIVIDUAL grants to the user, and GROUP grants for one of whose allowed
 * organisations a Membership says the user is a member. None: a 403 Forbidden body.
 */
export class AccessVerifier {
  constructor(
    private readonly cache: VerifyCache,
    private readonly now: () => Date,
    private readonly enforcementPoints: CheckCallers,
  ) {}

  verify(principal: Principal, userId: string, itemId: string): Verification {
    const lookup = lookupItem(this.cache.itemsWithId(itemId));
    const item = lookup.kind === 'found' ? lookup.item : undefined;
    if (!mayVerify(principal, userId, item, this.enforcementPoints)) {
      throw new HttpError(
        'Forbidden',
        `only user ${userId}, the owner of item ${itemId}, an org_admin of its organisation, a cos_admin ` +
          `or an enforcement point (role ${this.enforcementPoints.roles.join(' or ')}) may verify this access`,
        { title: 'Not allowed to verify' },
      );
    }
    const evaluator = new GrantEvaluator(this.cache, this.now());
    const effective = this.grantsOfUserOnItem(userId, itemId)
      .filter((grant) => evaluator.evaluate(grant).enforce)
      .sort(compareGrants);
    const [latest] = [...effective].sort(expiringLastFirst);
    if (latest === undefined) {
      throw new HttpError('Forbidden', `user ${userId} has no active policy on item ${itemId}`, {
        title: 'No active policy',
      });
    }
    return { latest: verifyResult(latest), all: effective.map(verifyResult) };
  }

  /** INDIVIDUAL grants to the user, GROUP grants allowing an organisation the user is a member of. */
  private grantsOfUserOnItem(userId: string, itemId: string): PolicyGrant[] {
    const individual = this.cache
      .grantsOfConsumer(userId)
      .filter((grant) => grant.spec.policyType === 'INDIVIDUAL' && grant.spec.itemId === itemId);
    const group = this.cache
      .grantsOnItem(itemId)
      .filter(
        (grant) =>
          grant.spec.policyType === 'GROUP' &&
          (grant.spec.constraints.subjects?.allowedOrgIds ?? []).some((org) =>
            this.cache.isOrganisationMember(org, userId),
          ),
      );
    return [...individual, ...group];
  }
}

function verifyResult(grant: PolicyGrant): VerifyResult {
  return {
    id: grant.metadata.uid ?? '',
    constraints: grant.spec.constraints,
    expiryAt: utcTimestamp(grant.spec.expiryTime),
  };
}

/** Latest expiry first; a stable sort keeps the listing order among grants that expire together. */
function expiringLastFirst(a: PolicyGrant, b: PolicyGrant): number {
  return Date.parse(b.spec.expiryTime) - Date.parse(a.spec.expiryTime);
}
