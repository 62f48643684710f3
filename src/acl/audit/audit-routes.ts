import type { Principal } from '../../auth/principal.js';
import { hasRole } from '../../auth/principal.js';
import type { AuditReader, AuditVisibility } from '../../audit/audit-reader.js';
import { decodeCursor } from '../../audit/audit-cursor.js';
import { POSTGRES_DEPENDENCY } from '../../audit/audit-store.js';
import { verifyChain } from '../../audit/chain-verifier.js';
import { successEnvelope } from '../../http/envelope.js';
import { HttpError, dependencyUnavailable } from '../../http/errors.js';
import type { RouteTable } from '../../http/openapi/route-table.js';
import { problemResponse } from '../../http/openapi/route-responses.js';
import type { UrnScheme } from '../../http/urn.js';
import { COS_ADMIN, ORG_ADMIN } from '../authorisation.js';
import { AuditQuerySchema, TimeRangeQuerySchema, auditResponseSchemas } from './audit-schemas.js';

export const NDJSON_MEDIA_TYPE = 'application/x-ndjson';

export interface AuditReadServices {
  reader: AuditReader;
  /** Resolves when PostgreSQL answers (before an export starts streaming). */
  ping: () => Promise<void>;
  /** The key the records' MACs are checked with; absent: only the hash chain is checked. */
  chainKey?: Buffer;
}

const TAGS = ['audit'];
const unavailable = problemResponse('PostgreSQL is unavailable; detail names postgres');

/** GET /audit, /audit/export and /audit/verify (docs/audit.md, "Routes"). */
export function addAuditRoutes(
  table: RouteTable,
  services: AuditReadServices & { urn: UrnScheme },
): RouteTable {
  const { urn, reader, ping, chainKey } = services;
  const schemas = auditResponseSchemas(urn);
  return table
    .add({
      method: 'get',
      path: '/audit',
      operationId: 'listAuditRecords',
      summary: 'Audit records, newest first',
      description:
        'cos_admin sees every record, an org_admin the records on the items and memberships of their ' +
        'organisation and their own actions, anyone else their own actions. Keyset paging: pass nextCursor ' +
        'as cursor for the next page.',
      tags: TAGS,
      access: 'authenticated',
      request: { query: AuditQuerySchema },
      responses: { 200: { description: 'A page of records', schema: schemas.page }, 503: unavailable },
      handler: withPostgresOutageAs503(async ({ principal, query }) => {
        const { limit, cursor, ...filters } = query;
        const before = cursor === undefined ? undefined : decodeCursor(cursor);
        const page = await reader.list(visibilityOf(principal), filters, {
          limit,
          ...(before ? { before } : {}),
        });
        const envelope = successEnvelope(urn, { title: 'Audit records', results: page.records });
        return {
          status: 200,
          body: { ...envelope, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) },
        };
      }),
    })
    .add({
      method: 'get',
      path: '/audit/export',
      operationId: 'exportAuditRecords',
      summary: 'Every record of a time range as NDJSON, oldest first',
      description: 'A stream of one JSON record per line, for archiving or a SIEM. Role cos_admin.',
      tags: TAGS,
      access: { role: COS_ADMIN },
      request: { query: TimeRangeQuerySchema },
      responses: {
        200: { description: 'One record per line', mediaType: NDJSON_MEDIA_TYPE },
        503: unavailable,
      },
      handler: withPostgresOutageAs503(async ({ query }) => {
        await ping();
        return { status: 200, body: reader.exportNdjson(query) };
      }),
    })
    .add({
      method: 'get',
      path: '/audit/verify',
      operationId: 'verifyAuditChain',
      summary: 'Checks the hash chain of a time range and says where it breaks',
      description:
        'Each record must match its hash, follow its predecessor without a gap in ids, and carry its ' +
        "predecessor's hash as prevHash; the first record of the range is checked against the record before " +
        'it, or the anchor retention left. With the chain key configured, each record must also carry the MAC ' +
        'of its hash under that key, which the database does not hold. Role cos_admin.',
      tags: TAGS,
      access: { role: COS_ADMIN },
      request: { query: TimeRangeQuerySchema },
      responses: { 200: { description: 'The report', schema: schemas.verified }, 503: unavailable },
      handler: withPostgresOutageAs503(async ({ query }) => {
        const report = await verifyChain(reader, query, chainKey);
        const title = report.valid ? 'Audit chain intact' : 'Audit chain broken';
        return { status: 200, body: successEnvelope(urn, { title, results: [report] }) };
      }),
    });
}

function visibilityOf(principal: Principal): AuditVisibility {
  if (hasRole(principal, COS_ADMIN)) return { scope: 'all' };
  if (hasRole(principal, ORG_ADMIN) && principal.organisationId !== undefined) {
    return { scope: 'organisation', organisationId: principal.organisationId, actorId: principal.id };
  }
  return { scope: 'own', actorId: principal.id };
}

/** A failure of PostgreSQL under a read is a 503 naming it. */
function withPostgresOutageAs503<I, R>(handler: (input: I) => Promise<R>) {
  return async (input: I): Promise<R> => {
    try {
      return await handler(input);
    } catch (error) {
      if (error instanceof HttpError) throw error;
      throw dependencyUnavailable(POSTGRES_DEPENDENCY, error);
    }
  };
}
