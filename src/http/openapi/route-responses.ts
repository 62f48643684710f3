import { problemSchema } from '../envelope.js';
import { JSON_MEDIA_TYPE, requiredRoles } from './route-definition.js';
import type { AnyRouteDefinition, ResponseDefinition, RouteAccess } from './route-definition.js';

const problem = (description: string): ResponseDefinition => ({ description, schema: problemSchema });

/** A problem-body response, for route-specific errors such as 409 or 503. */
export function problemResponse(description: string): ResponseDefinition {
  return problem(description);
}

/** The declared responses plus the standard errors the route's own declaration makes possible. */
export function effectiveResponses(route: AnyRouteDefinition): Record<number, ResponseDefinition> {
  const request = route.request ?? {};
  const standard: Record<number, ResponseDefinition> = {};
  if (Object.values(request).some((schema) => schema !== undefined))
    standard[400] = problem('Invalid request');
  if (route.access !== 'public') standard[401] = problem('Missing or invalid credentials');
  const forbidden = forbiddenDescription(route.access);
  if (forbidden !== undefined) standard[403] = problem(forbidden);
  if (request.body || request.bodies) {
    standard[413] = problem('Request body too large');
    standard[415] = problem(`Request body is not ${bodyMediaTypes(route).join(' or ')}`);
  }
  return { ...standard, ...route.responses };
}

/** Why a 403: the rule's requirement, or the roles the route requires; undefined when no 403 is possible. */
function forbiddenDescription(access: RouteAccess): string | undefined {
  if (typeof access === 'object' && 'callers' in access) return access.callers.requirement;
  const roles = requiredRoles(access);
  return roles.length > 0 ? `Requires role ${roles.join(' or ')}` : undefined;
}

/** The media types a route accepts its body in. */
export function bodyMediaTypes(route: AnyRouteDefinition): string[] {
  return route.request?.bodies ? Object.keys(route.request.bodies) : [JSON_MEDIA_TYPE];
}
