import type { PolicyGrant } from '../../api/v1alpha1/index.js';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import { GrantEvaluator } from '../../verdict/grant-verdict.js';
import type { AclCache } from '../acl-cache.js';
import type { ListingPage } from '../listing-route.js';
import { lookupItem } from '../authorisation.js';
import {
  distinctSorted,
  selectPage,
  toRow,
  type ListingQuery,
  type PolicyRow,
  type RowView,
} from './policy-rows.js';

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

  /**
   * Grants usable by the caller: INDIVIDUAL grants to them, GROUP grants allowing an organisation a Membership
   * says they are a member of (as verify and the check decide; the token's organisation claim proves nothing
   * here). A GROUP row names only the caller's organisations among those it allows: the others are other
   * tenants' business.
   */
  consumer(principal: Principal, query: ListingQuery): Listing {
    const organisations = this.cache.organisationsOfMember(principal.id);
    const grants = distinctSorted(this.cache.grantsOfConsumer(principal.id, organisations));
    return this.listing(grants, query, { withConsumer: false, visibleOrganisations: new Set(organisations) });
  }

  /**
   * Grants the caller issued; only these rows name the consumer (docs/acl-grants.md, "Listings"). Only grants of
   * the API's own namespace: `issuerId` is a plain field, which admission lets only the API set there; a grant
   * applied elsewhere (GitOps, a namespace bound to an organisation) was issued by no user of this API.
   */
  provider(principal: Principal, query: ListingQuery): Listing {
    const issued = this.cache
      .grantsIssuedBy(principal.id)
      .filter((grant) => grant.metadata.namespace === this.cache.aclNamespace);
    return this.listing(distinctSorted(issued), query, { withConsumer: true });
  }

  /**
   * Grants on the items of the caller's organisation (the route requires org_admin). An itemId that several
   * CatalogItems carry is no organisation's (the verdict denies grants on it): another organisation could have
   * made it, so its grants are not listed here.
   */
  organisation(principal: Principal, query: ListingQuery): Listing {
    const organisationId = principal.organisationId;
    if (organisationId === undefined) {
      throw new HttpError('Forbidden', 'the organisation listing needs an organisation claim in the token');
    }
    const itemIds = new Set(
      this.cache
        .itemsOfOrganisation(organisationId)
        .map((item) => item.spec.itemId)
        .filter((itemId) => lookupItem(this.cache.itemsWithId(itemId)).kind === 'found'),
    );
    const grants = [...itemIds].flatMap((itemId) => this.cache.grantsOnItem(itemId));
    return this.listing(distinctSorted(grants), query, { withConsumer: false });
  }

  /** Every grant (the route requires cos_admin); the ordered list is kept until the cache changes. */
  platform(query: ListingQuery): Listing {
    return this.listing(this.cache.allGrantsInOrder(), query, { withConsumer: false });
  }

  private listing(ordered: readonly PolicyGrant[], query: ListingQuery, view: RowView): Listing {
    const now = this.now();
    const evaluator = new GrantEvaluator(this.cache, now);
    const { page, paginationInfo } = selectPage(ordered, query, now);
    const results = page.map((grant) =>
      toRow(grant, { ...view, ownerId: this.ownerOf(grant), now, verdict: evaluator.evaluate(grant) }),
    );
    return { results, paginationInfo };
  }

  private ownerOf(grant: PolicyGrant): string | undefined {
    const lookup = lookupItem(this.cache.itemsWithId(grant.spec.itemId));
    return lookup.kind === 'found' ? lookup.item.spec.ownerId : undefined;
  }
}
