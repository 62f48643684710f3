import type { OpenApiDocument } from '../http/openapi/route-definition.js';
import type { RouteTable } from '../http/openapi/route-table.js';
import { documentedOperationalRoutes } from '../http/operational-routes.js';
import type { UrnScheme } from '../http/urn.js';

/**
 * The ACL API's OpenAPI document: served at GET /docs, committed in docs/openapi/. The API's paths are
 * relative to the base path; the operational ones name the service root as their server.
 */
export function aclDocument(routes: RouteTable, basePath: string, urn: UrnScheme): OpenApiDocument {
  return routes.document(
    {
      info: {
        title: 'policy-grant-operator ACL API',
        version: '2.0.0',
        description:
          'Administration of policy grants: create, revoke, list, verify; membership events, snapshots and listings; delegations; access requests.',
      },
      servers: [{ url: basePath }],
    },
    documentedOperationalRoutes(urn),
  );
}
