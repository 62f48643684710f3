import type { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import type { ResponseHeaders } from '../errors.js';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;
export type OpenApiServer = NonNullable<OpenApiDocument['servers']>[number];
export type OpenApiSecurityScheme = NonNullable<
  NonNullable<OpenApiDocument['components']>['securitySchemes']
>[string];

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export const JSON_MEDIA_TYPE = 'application/json';

/** A route's own rule on authenticated callers, for rules that roles alone cannot say. */
export interface CallerRule {
  admits(principal: Principal): boolean;
  /** Who is admitted: the detail of the 403 for everyone else. */
  requirement: string;
}

/**
 * Who may call a route: anyone, any authenticated caller, callers holding a role (or any one of several), or
 * callers a rule admits.
 */
export type RouteAccess =
  'public' | 'authenticated' | { role: string } | { anyRole: readonly string[] } | { callers: CallerRule };

/** The roles of which a caller needs one; none for public, merely authenticated and caller-rule routes. */
export function requiredRoles(access: RouteAccess): readonly string[] {
  if (typeof access !== 'object' || 'callers' in access) return [];
  return 'role' in access ? [access.role] : access.anyRole;
}

export interface RouteRequestSchemas {
  /** A JSON body (`application/json` and `application/*+json`). */
  body?: z.ZodType;
  /**
   * Instead of `body`: a JSON body in one of these media types only, each with its own schema (another media
   * type is a 415). The handler receives what the schema of the request's media type produced.
   */
  bodies?: Readonly<Record<string, z.ZodType>>;
  query?: z.ZodObject;
  /** Keys in lower case: that is how node presents header names. */
  headers?: z.ZodObject;
  params?: z.ZodObject;
}

/**
 * An OpenAPI link: how a value of this response feeds another operation (its parameters as runtime
 * expressions, e.g. `$response.body#/results/0/policyId`). Clients and fuzzers follow them from a created
 * resource to the routes that take its id.
 */
export interface ResponseLink {
  operationId: string;
  /** Parameter name (`header.if-match` for a header) to runtime expression. */
  parameters: Readonly<Record<string, string>>;
  description: string;
}

export interface ResponseDefinition {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json. */
  mediaType?: string;
  headers?: z.ZodObject;
  links?: Readonly<Record<string, ResponseLink>>;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;
type ParsedBody<R extends RouteRequestSchemas> =
  R['bodies'] extends Readonly<Record<string, z.ZodType>>
    ? Parsed<R['bodies'][keyof R['bodies']]>
    : Parsed<R['body']>;

export interface RouteInput<R extends RouteRequestSchemas, A extends RouteAccess> {
  body: ParsedBody<R>;
  query: Parsed<R['query']>;
  headers: Parsed<R['headers']>;
  params: Parsed<R['params']>;
  principal: A extends 'public' ? undefined : Principal;
  /** For `request.log` and `request.id`; the validated parts above are what handlers read. */
  request: Request;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: ResponseHeaders;
}

// The defaults apply when a declaration has no `request`: its parts are then typed undefined.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface RouteDefinition<R extends RouteRequestSchemas = {}, A extends RouteAccess = RouteAccess> {
  method: HttpMethod;
  /** OpenAPI style, relative to the router's mount path: `/policy/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  access: A;
  request?: R;
  /** Success and route-specific error responses. Standard errors (400/401/403/413/415) are added. */
  responses: Record<number, ResponseDefinition>;
  handler: (input: RouteInput<R, A>) => RouteResult | Promise<RouteResult>;
}

/** A definition with its generic parameters erased, as the route table stores it. */
export type AnyRouteDefinition = RouteDefinition<RouteRequestSchemas, RouteAccess>;

/** How a route table's non-public routes authenticate and how the document describes that. */
export interface ApiAuthentication {
  middleware: RequestHandler;
  /** Alternatives: any one of them authenticates. Keys name `components.securitySchemes`. */
  schemes: Record<string, OpenApiSecurityScheme>;
  /** The per-subject rate limit of a route, run right after authentication; none: unlimited. */
  subjectLimit?: (route: AnyRouteDefinition) => RequestHandler | undefined;
}
