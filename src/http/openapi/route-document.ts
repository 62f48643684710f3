import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { ResponseConfig, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { ZodType } from 'zod';
import { JSON_MEDIA_TYPE, requiredRoles } from './route-definition.js';
import type {
  AnyRouteDefinition,
  ApiAuthentication,
  OpenApiDocument,
  OpenApiServer,
  ResponseDefinition,
  RouteAccess,
} from './route-definition.js';
import { effectiveResponses } from './route-responses.js';

export interface DocumentConfig {
  info: OpenApiDocument['info'];
  /** Where the routes are mounted, e.g. `[{url: '/v2'}]`: the document's paths are relative to it. */
  servers?: OpenApiServer[];
}

const ROOT_SERVER: OpenApiServer = { url: '/' };

/**
 * OpenAPI 3.1, because 3.1 lets a security requirement list the roles a route needs. `rootRoutes` are
 * mounted at the service root: when the document's server is elsewhere (the ACL API's base path), each of
 * their operations names the root as its server.
 */
export function buildOpenApiDocument(
  routes: readonly AnyRouteDefinition[],
  config: DocumentConfig,
  authentication?: ApiAuthentication,
  rootRoutes: readonly AnyRouteDefinition[] = [],
): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  for (const [name, scheme] of Object.entries(authentication?.schemes ?? {})) {
    registry.registerComponent('securitySchemes', name, scheme);
  }
  const schemeNames = Object.keys(authentication?.schemes ?? {});
  for (const route of routes) registry.registerPath(routeConfig(route, schemeNames));
  const atRoot = (config.servers?.[0]?.url ?? ROOT_SERVER.url) === ROOT_SERVER.url;
  for (const route of rootRoutes) {
    registry.registerPath({
      ...routeConfig(route, schemeNames),
      ...(atRoot ? {} : { servers: [ROOT_SERVER] }),
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: config.info,
    ...(config.servers ? { servers: config.servers } : {}),
  });
}

function routeConfig(route: AnyRouteDefinition, schemeNames: readonly string[]): RouteConfig {
  const { query, headers, params } = route.request ?? {};
  const content = bodyContent(route);
  return {
    method: route.method,
    path: route.path,
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    ...(route.tags === undefined ? {} : { tags: route.tags }),
    ...(schemeNames.length > 0 ? { security: securityRequirement(route.access, schemeNames) } : {}),
    request: {
      ...(content ? { body: { required: true, content } } : {}),
      ...(query ? { query } : {}),
      ...(headers ? { headers } : {}),
      ...(params ? { params } : {}),
    },
    responses: Object.fromEntries(
      Object.entries(effectiveResponses(route)).map(([status, response]) => [
        status,
        responseConfig(response),
      ]),
    ),
  };
}

function bodyContent(route: AnyRouteDefinition): Record<string, { schema: ZodType }> | undefined {
  const { body, bodies } = route.request ?? {};
  const schemas = bodies ?? (body ? { [JSON_MEDIA_TYPE]: body } : undefined);
  if (!schemas) return undefined;
  return Object.fromEntries(Object.entries(schemas).map(([mediaType, schema]) => [mediaType, { schema }]));
}

/**
 * Public routes say so with `[]`; otherwise any one scheme, listing the required role if there is one. Each
 * requirement's list must be satisfied whole, so a route that accepts any one of several roles has one
 * requirement per scheme and role.
 */
function securityRequirement(
  access: RouteAccess,
  schemeNames: readonly string[],
): Record<string, string[]>[] {
  if (access === 'public') return [];
  const roles = requiredRoles(access);
  if (roles.length === 0) return schemeNames.map((name) => ({ [name]: [] }));
  return schemeNames.flatMap((name) => roles.map((role) => ({ [name]: [role] })));
}

function responseConfig(response: ResponseDefinition): ResponseConfig {
  return {
    description: response.description,
    ...(response.headers ? { headers: response.headers } : {}),
    ...(response.links ? { links: { ...response.links } } : {}),
    ...(response.schema
      ? { content: { [response.mediaType ?? JSON_MEDIA_TYPE]: { schema: response.schema } } }
      : {}),
  };
}
