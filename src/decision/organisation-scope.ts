import { encodeObjectId } from '../spicedb/object-id.js';
import type { CanonicalCheck } from './canonical-check.js';
import { OWNER_RELATION, OWNER_SUBJECT_TYPES } from '../verdict/projection.js';
import type { CanonicalCheckEvaluator } from './canonical-check.js';

/**
 * What an enforcement point may decide and search about: every organisation's items (a platform-wide one), or
 * the items of the organisations it is bound to. An item lies in an organisation when its CatalogItem names it
 * (`resource:<item>#owner@organization:<organisation>`, which the controller projects).
 */
export type OrganisationScope = 'every' | ReadonlySet<string>;

/** The check whether `check`'s item belongs to `organisationId`: its owner relationship to the organisation. */
export function ownedBy({ object, spicedb }: CanonicalCheck, organisationId: string): CanonicalCheck {
  return {
    subject: { type: OWNER_SUBJECT_TYPES.organisation, id: organisationId },
    object,
    relation: OWNER_RELATION,
    spicedb: {
      resourceType: spicedb.resourceType,
      resourceId: spicedb.resourceId,
      permission: OWNER_RELATION,
      subjectType: OWNER_SUBJECT_TYPES.organisation,
      subjectId: encodeObjectId(organisationId),
    },
  };
}

/**
 * Whether each check's item lies within `scope`, asked through the check's own evaluator (revision barrier,
 * decision cache, batcher: the checks of one call go to SpiceDB together). An item of no organisation, or whose
 * owner relationship is gone, lies within none.
 */
export async function withinScope(
  evaluate: CanonicalCheckEvaluator,
  checks: readonly CanonicalCheck[],
  scope: OrganisationScope,
  callerToken?: string,
): Promise<boolean[]> {
  if (scope === 'every') return checks.map(() => true);
  const organisations = [...scope];
  const owned = await Promise.all(
    checks.flatMap((check) =>
      organisations.map(
        async (organisation) => (await evaluate(ownedBy(check, organisation), callerToken)).allowed,
      ),
    ),
  );
  return checks.map((_, index) =>
    owned.slice(index * organisations.length, (index + 1) * organisations.length).includes(true),
  );
}

/**
 * The check's evaluator for an enforcement point with a scope: a check of an item outside it is a deny, whatever
 * SpiceDB holds. The item's check and its ownership are asked together.
 */
export function scopedEvaluator(evaluate: CanonicalCheckEvaluator) {
  return async (check: CanonicalCheck, callerToken: string | undefined, scope: OrganisationScope) => {
    if (scope === 'every') return evaluate(check, callerToken);
    const [result, [within]] = await Promise.all([
      evaluate(check, callerToken),
      withinScope(evaluate, [check], scope, callerToken),
    ]);
    return within ? result : { ...result, allowed: false };
  };
}
