import type { OpenApiDocument } from '../http/openapi/route-definition.js';
import type { RouteRegistry } from '../http/openapi/route-registry.js';

/** The ACL API's OpenAPI document: served at GET /docs, committed in docs/openapi/. */
export function aclDocument(routes: RouteRegistry, basePath: string): OpenApiDocument {
  return routes.document({
    info: {
      title: 'policy-grant-operator ACL API',
      version: '2.0.0',
      description:
        'Administration of policy grants: create, revoke, list, verify; membership events, snapshots and listings.',
    },
    servers: [{ url: basePath }],
  });
}
