import type { z } from 'zod';
import type { Principal } from '../auth/principal.js';
import { successEnvelope, type PaginationInfo } from '../http/envelope.js';
import type { ResponseDefinition, RouteAccess } from '../http/openapi/route-definition.js';
import { problemResponse } from '../http/openapi/route-responses.js';
import type { UrnScheme } from '../http/urn.js';
import type { WithSyncedCache } from './memberships/membership-routes.js';

/** One page of a listing, as the envelope carries it. */
export interface ListingPage<Row> {
  results: Row[];
  paginationInfo: PaginationInfo;
}

/** What the GET listings of one resource share: the query they take, the page they answer, its title. */
export interface ListingFamily<Q extends z.ZodObject> {
  urn: UrnScheme;
  withSyncedCache: WithSyncedCache;
  tags: string[];
  query: Q;
  /** The 200 response: a page of rows. */
  page: ResponseDefinition & { schema: z.ZodType };
  /** The envelope's title. */
  title: string;
}

/** One listing of a family: its path, who may call it, and the page it lists for the caller. */
export interface ListingRoute<Q extends z.ZodObject> {
  path: string;
  operationId: string;
  summary: string;
  access: Exclude<RouteAccess, 'public'>;
  list: (principal: Principal, query: z.output<Q>) => ListingPage<unknown>;
}

const unavailable = problemResponse('Kubernetes is unavailable; detail names it');

/** The builder of a family's GET listings (the policies' and the access requests' viewpoints). */
export function listingRoutes<Q extends z.ZodObject>(family: ListingFamily<Q>) {
  return ({ path, operationId, summary, access, list }: ListingRoute<Q>) => ({
    method: 'get' as const,
    path,
    operationId,
    summary,
    tags: family.tags,
    access,
    request: { query: family.query },
    responses: { 200: family.page, 503: unavailable },
    handler: family.withSyncedCache(({ principal, query }: { principal: Principal; query: z.output<Q> }) => ({
      status: 200,
      body: successEnvelope(family.urn, { title: family.title, ...list(principal, query) }),
    })),
  });
}
