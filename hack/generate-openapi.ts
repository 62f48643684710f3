// Writes the OpenAPI documents that the ACL API, the decision service and the controller serve at GET /docs
// to docs/openapi/, so that the contract can be read without running them.
// Usage: npm run generate:openapi
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';
import { aclEnvironment } from '../src/acl/acl-config.js';
import { aclDocument } from '../src/acl/acl-document.js';
import { aclRoutes } from '../src/acl/acl-routes.js';
import { AuditedRoutes } from '../src/acl/audit/audited-routes.js';
import { apiAuthentication } from '../src/auth/middleware.js';
import { controllerDocument } from '../src/controller/operational-app.js';
import { DEFAULT_CHECK_CALLERS } from '../src/decision/check-callers.js';
import { checkRoutes } from '../src/decision/check-route.js';
import { decisionDocument } from '../src/decision/decision-app.js';
import { revisionRoutes } from '../src/decision/revision-route.js';
import { authzenRoutes } from '../src/decision/authzen/authzen-routes.js';
import type { OpenApiDocument } from '../src/http/openapi/route-definition.js';
import { createUrnScheme } from '../src/http/urn.js';

export const OPENAPI_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'openapi');

export interface OpenApiFile {
  fileName: string;
  content: string;
}

/**
 * Stands in for every service behind the routes: a document is built from the route declarations alone, so
 * no handler runs and nothing here is called.
 */
const notCalled = new Proxy(
  {},
  {
    get() {
      throw new Error('a service was used while only documenting the routes');
    },
  },
) as never;

/** Both schemes, as with BASIC_CREDENTIALS_DIR set: the document lists every way a caller may authenticate. */
const authentication = apiAuthentication({ bearer: notCalled, basic: notCalled });

/** The documents with the defaults of the configuration (ERROR_NAMESPACE, ACL_BASE_PATH, DECISION_CLIENT_ROLES). */
function documents(): Record<string, OpenApiDocument> {
  const aclServices = {
    urn: createUrnScheme('acl'),
    cache: notCalled,
    creator: notCalled,
    revoker: notCalled,
    listings: notCalled,
    verifier: notCalled,
    memberships: { applier: notCalled, snapshots: notCalled },
    delegations: notCalled,
    agents: notCalled,
    accessRequests: notCalled,
    explainer: notCalled,
    audited: new AuditedRoutes(notCalled),
    auditReads: { reader: notCalled, ping: notCalled },
  };
  const acl = aclRoutes(aclServices, { authentication });
  const decisionUrn = createUrnScheme('authz');
  const decision = checkRoutes({
    urn: decisionUrn,
    authentication,
    callers: DEFAULT_CHECK_CALLERS,
    evaluate: notCalled,
  });
  const authzen = authzenRoutes({
    authentication,
    callers: DEFAULT_CHECK_CALLERS,
    evaluator: { evaluation: notCalled, evaluations: notCalled },
    searches: { resources: notCalled, subjects: notCalled, actions: notCalled },
  });
  return {
    'acl-api.json': aclDocument(acl, aclEnvironment.shape.ACL_BASE_PATH.parse(undefined), aclServices.urn),
    'decision-service.json': decisionDocument(
      decision,
      authzen,
      revisionRoutes({ urn: decisionUrn, barrier: notCalled }),
      decisionUrn,
    ),
    'controller.json': controllerDocument(createUrnScheme('controller')),
  };
}

/** The files of docs/openapi/, formatted as prettier (and so `npm run lint`) wants them. */
export async function renderOpenApiFiles(): Promise<OpenApiFile[]> {
  const options = await prettier.resolveConfig(join(OPENAPI_DIR, 'acl-api.json'));
  return Promise.all(
    Object.entries(documents()).map(async ([fileName, document]) => ({
      fileName,
      content: await prettier.format(JSON.stringify(document), { ...options, parser: 'json' }),
    })),
  );
}

async function main(): Promise<void> {
  for (const file of await renderOpenApiFiles()) {
    writeFileSync(join(OPENAPI_DIR, file.fileName), file.content);
    console.log(`wrote docs/openapi/${file.fileName}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
