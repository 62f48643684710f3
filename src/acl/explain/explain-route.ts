import { successEnvelope } from '../../http/envelope.js';
import type { RouteTable } from '../../http/openapi/route-table.js';
import { problemResponse } from '../../http/openapi/route-responses.js';
import type { UrnScheme } from '../../http/urn.js';
import type { AclCache } from '../acl-cache.js';
import type { AuditedRoutes, MutationAudit } from '../audit/audited-routes.js';
import { auditTargets, type AuditTargets } from '../audit/mutation-audits.js';
import type { WithSyncedCache } from '../memberships/membership-routes.js';
import { explainResponseSchemas, ExplainQuerySchema, type ExplainQuery } from './explain-schemas.js';
import type { Explainer } from './explainer.js';

/** The action of an explanation's audit record: a read of who may access what, which is sensitive. */
export const EXPLAIN_READ_ACTION = 'explain.read';

/**
 * One record per request, answered or refused, on the item (so its org_admins see an answered one in GET /audit);
 * a refused one names only what the request did (auditTargets).
 */
function explainAudit(cache: AclCache): MutationAudit<{ query: ExplainQuery }> {
  const targetsFor = auditTargets(cache);
  const read = (
    query: { itemId?: unknown; userId?: unknown; agentId?: unknown; accessType?: unknown },
    targets: AuditTargets,
  ) => {
    const subject =
      query.userId === undefined ? `agent ${String(query.agentId)}` : `user ${String(query.userId)}`;
    return [
      {
        action: EXPLAIN_READ_ACTION,
        target: targets.item(String(query.itemId ?? '')),
        detail: `explained ${String(query.accessType)} of ${subject}`,
      },
    ];
  };
  return {
    completed: ({ query }) => read(query, targetsFor({ refused: false })),
    attempted: (attempt) => read(attempt.query, targetsFor(attempt)),
  };
}

/** GET /explain: why a user or agent has, or lacks, one access type on one item. */
export function addExplainRoute(
  table: RouteTable,
  services: { urn: UrnScheme; cache: AclCache; explainer: Explainer; audited: AuditedRoutes },
  withSyncedCache: WithSyncedCache,
): RouteTable {
  const { urn, cache, explainer, audited } = services;
  const schemas = explainResponseSchemas(urn);
  return table.add(
    audited.wrap(explainAudit(cache), {
      method: 'get',
      path: '/explain',
      operationId: 'explainAccess',
      summary: 'Why a user or agent has, or lacks, an access type on an item',
      description:
        'The verdict the controller enforces and, in order, each object that bears on it (CatalogItem, the ' +
        'namespaces that hold grants, PolicyGrants, Memberships, Delegations with their owner’s own access), ' +
        'each with its own verdict, reason and Enforced condition. `disagreement` says when the record and ' +
        'what SpiceDB enforces differ (a grant not enforced yet, or a revoked one still enforced). For the ' +
        'item’s owner, an org_admin of its organisation and cos_admin. Memberships of an organisation the ' +
        'caller does not administer (one a GROUP grant names) are one neutral object, reason Undisclosed. Every ' +
        'request is audited (explain.read); a refused one names only the itemId asked for.',
      tags: ['policies'],
      access: 'authenticated',
      request: { query: ExplainQuerySchema },
      responses: {
        200: { description: 'The explanation (detail: its one-line message)', schema: schemas.explained },
        403: problemResponse(
          'The caller is none of the item’s owner, an org_admin of its organisation, cos_admin; also for an ' +
            'item no CatalogItem names, unless the caller is cos_admin',
        ),
        503: problemResponse('Kubernetes or PostgreSQL (the audit) is unavailable; detail names it'),
      },
      handler: withSyncedCache(async ({ principal, query }) => {
        const subject =
          query.userId === undefined
            ? { type: 'agent' as const, id: query.agentId ?? '' }
            : { type: 'user' as const, id: query.userId };
        const explanation = await explainer.explain(principal, subject, query.itemId, query.accessType);
        return {
          status: 200,
          body: successEnvelope(urn, {
            title: 'Explanation',
            detail: explanation.message,
            results: [explanation],
          }),
        };
      }),
    }),
  );
}
