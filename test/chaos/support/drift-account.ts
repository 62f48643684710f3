import type { PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import { OWNER_RELATION } from '../../../src/verdict/projection.js';
import { parseTupleKey, type TupleKey } from '../../../src/verdict/tuple-key.js';
import { decodeObjectId } from '../../../src/spicedb/object-id.js';
import { enforcedCondition } from '../../integration/controller/support/harness.js';
import { describeSpec, type GrantChurn } from './grant-churn.js';

function describeGrant(grant: PolicyGrant | undefined): string {
  if (!grant) return 'gone';
  const condition = enforcedCondition(grant);
  const state = grant.spec.revokedAt ? 'revoked' : 'active';
  return (
    `now generation ${grant.metadata.generation}, ${state}, ${describeSpec(grant.spec)}; ` +
    `Enforced ${condition?.reason} for generation ${condition?.observedGeneration}`
  );
}

/**
 * A drifted grant tuple with the grant it came from (its user names it: users are never shared), what that grant
 * is now, and what the churn did to it: the evidence a failure needs. Other tuples are shown as they are.
 */
export function accountForTuple(key: TupleKey, grants: readonly PolicyGrant[], churn: GrantChurn): string {
  const { relation, subject } = parseTupleKey(key);
  if (relation === OWNER_RELATION || subject.type !== 'user') return key;
  const name = churn.grantWithUser(decodeObjectId(subject.id));
  if (!name) return `${key}: no grant ever had this user`;
  const grant = grants.find((candidate) => candidate.metadata.name === name);
  return [`${key}: grant ${name}, ${describeGrant(grant)}`, ...churn.historyOf(name)].join('\n    ');
}
