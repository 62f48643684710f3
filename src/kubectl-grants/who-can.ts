import { accessTypesOf, accessTypesText, isMember } from '../api/v1alpha1/index.js';
import { GrantEvaluator } from '../verdict/grant-verdict.js';
import type { ClusterLister } from '../verdict/cluster-lister.js';

/** Who the record gives access: an effective grant, or a member through an effective GROUP grant. */
export interface WhoCanRow {
  kind: 'PolicyGrant' | 'Membership';
  ref: string;
  policyId: string;
  subject: string;
  access: string;
  expiry: string;
}

/**
 * The effective grants on the item (naming `accessType` when given), by the one verdict, and for each GROUP
 * grant the members of its organisations that a Membership names, organisation by organisation.
 */
export function whoCan(
  view: ClusterLister,
  itemId: string,
  accessType: string | undefined,
  now: Date,
): WhoCanRow[] {
  const evaluator = new GrantEvaluator(view, now);
  const rows: WhoCanRow[] = [];
  const grants = view
    .grantsOnItem(itemId)
    .filter((grant) => accessType === undefined || accessTypesOf(grant.spec).includes(accessType))
    .filter((grant) => evaluator.evaluate(grant).enforce);
  for (const grant of grants) {
    const row = {
      policyId: grant.metadata.uid ?? '',
      access: accessTypesText(grant.spec),
      expiry: grant.spec.expiryTime,
    };
    const ref = `${grant.metadata.namespace}/${grant.metadata.name}`;
    if (grant.spec.policyType === 'INDIVIDUAL') {
      rows.push({ kind: 'PolicyGrant', ref, subject: `user:${grant.spec.userId}`, ...row });
      continue;
    }
    const organisations = grant.spec.constraints.subjects?.allowedOrgIds ?? [];
    rows.push({
      kind: 'PolicyGrant',
      ref,
      subject: organisations.map((org) => `organisation:${org}`).join(','),
      ...row,
    });
    for (const membership of [...new Set(organisations)].flatMap((org) => view.membershipsOf(org))) {
      const { organisationId, userId } = membership.spec;
      if (view.membership({ organisationId, userId }) !== membership || !isMember(membership)) continue;
      rows.push({
        kind: 'Membership',
        ref: `${membership.metadata.namespace}/${membership.metadata.name}`,
        subject: `user:${userId}`,
        ...row,
      });
    }
  }
  return rows;
}
