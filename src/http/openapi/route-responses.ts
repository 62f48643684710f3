import { z } from 'zod';
import { problemSchema } from '../envelope.js';
import { JSON_MEDIA_TYPE, requiredRoles } from './route-definition.js';
import type { AnyRouteDefinition, ResponseDefinition, RouteAccess } from './route-definition.js';

const problem = (description: string): ResponseDefinition => ({ description, schema: problemSchema });

/** A problem-body response, for route-specific errors such as 409 or 503. */
export function problemResponse(description: string): ResponseDefinition {
  return problem(description);
}

const rateLimitHeaders = z.object({
  'retry-after': z.string().meta({ description: 'Seconds until the limit allows requests again' }),
  ratelimit: z
    .string()
    .optional()
    .meta({ description: 'IETF RateLimit (draft 8), e.g. `"read"; r=0; t=42`; on every limited answer' }),
  'ratelimit-policy': z
    .string()
    .optional()
    .meta({ description: 'IETF RateLimit-Policy (draft 8), e.g. `"read"; q=6000; w=60`' }),
});

/**
 * 429: the caller's rate limit for the route's class, or too many failed authentications from its address.
 * `schema`: the route's error body when it is not the plain problem (the check's carries a deny).
 */
export function tooManyRequestsResponse(schema: z.ZodType = problemSchema): ResponseDefinition {
  return {
    description:
      'Too many requests: over the rate limit of the caller (per subject and route class) or too many ' +
      'failed authentications from the client address; Retry-After says when to try again',
    schema,
    headers: rateLimitHeaders,
  };
}

/** The declared responses plus the standard errors the route's own declaration makes possible. */
export function effectiveResponses(route: AnyRouteDefinition): Record<number, ResponseDefinition> {
  const request = route.request ?? {};
  const standard: Record<number, ResponseDefinition> = {};
  if (Object.values(request).some((schema) => schema !== undefined))
    standard[400] = problem('Invalid request');
  if (route.access !== 'public') {
    standard[401] = problem('Missing or invalid credentials');
    standard[429] = tooManyRequestsResponse();
  }
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
