import type { PolicyGrant } from '../../api/v1alpha1/index.js';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import { GrantEvaluator } from '../../verdict/grant-verdict.js';
import type { AclCache } from '../acl-cache.js';
import type { ListingPage } from '../listing-route.js';
import { lookupItem } from '../authorisation.js';
import { distinctSorted, selectPage, toRow, type ListingQuery, type PolicyRow } from './policy-rows.js';

export type Listing = ListingPage<PolicyRow>;

/**
 * The four viewpoints of GET /policy/*, each an index lookup in the informer cache. Every row carries the
 * verdict on its grant (`enforced`, `enforcedReason`), evaluated as the controller does.
 */
export class PolicyListings {
  constructor(
    private readonly cache: AclCache,
    private readonly now: () => Date,
  ) {}

  /** Grants usable by the caller: INDIVIDUAL grants to them, GROUP grants allowing their organisation. */
  consumer(principal: Principal, query: ListingQuery): Listing {
    return this.listing(
      distinctSorted(this.cache.grantsOfConsumer(principal.id, principal.organisationId)),
      query,
      false,
    );
  }

  /**
   * Grants the caller issued; only these rows name the consumer (docs/acl-api.md, "Listings"). Only grants of
   * the API's own namespace: `issuerId` is a plain field, which admission lets only the API set there; a grant
   * applied elsewhere (GitOps, a namespace bound to an organisation) was issued by no user of this API.
   */
  provider(principal: Principal, query: ListingQuery): Listing {
    const issued = this.cache
      .grantsIssuedBy(principal.id)
      .filter((grant) => grant.metadata.namespace === this.cache.aclNamespace);
    return this.listing(distinctSorted(issued), query, true);
  }

  /** Grants on the items of the caller's organisation (the route requires org_admin). */
  organisation(principal: Principal, query: ListingQuery): Listing {
    const organisationId = principal.organisationId;
    if (organisationId === undefined) {
      throw new HttpError('Forbidden', 'the organisation listing needs an organisation claim in the token');
    }
    const itemIds = new Set(this.cache.itemsOfOrganisation(organisationId).map((item) => item.spec.itemId));
    const grants = [...itemIds].flatMap((itemId) => this.cache.grantsOnItem(itemId));
    return this.listing(distinctSorted(grants), query, false);
  }

  /** Every grant (the route requires cos_admin); the ordered list is kept until the cache changes. */
  platform(query: ListingQuery): Listing {
    return this.listing(this.cache.allGrantsInOrder(), query, false);
  }

  private listing(ordered: readonly PolicyGrant[], query: ListingQuery, withConsumer: boolean): Listing {
    const now = this.now();
    const evaluator = new GrantEvaluator(this.cache, now);
    const { page, paginationInfo } = selectPage(ordered, query, now);
    const results = page.map((grant) =>
      toRow(grant, { ownerId: this.ownerOf(grant), withConsumer, now, verdict: evaluator.evaluate(grant) }),
    );
    return { results, paginationInfo };
  }

  private ownerOf(grant: PolicyGrant): string | undefined {
    const lookup = lookupItem(this.cache.itemsWithId(grant.spec.itemId));
    return lookup.kind === 'found' ? lookup.item.spec.ownerId : undefined;
  }
}
