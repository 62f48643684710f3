import type { AnyRouteDefinition } from '../http/openapi/route-definition.js';

/** POST /verify answers a question and changes nothing. */
const READS_BY_POST = new Set(['verifyPolicy']);

/** The rate-limit class of an ACL route: `read` for GETs and verify, `write` for everything that changes. */
export function aclRouteClass(route: Pick<AnyRouteDefinition, 'method' | 'operationId'>): 'read' | 'write' {
  return route.method === 'get' || READS_BY_POST.has(route.operationId) ? 'read' : 'write';
}
