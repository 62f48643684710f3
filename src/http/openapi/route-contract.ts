import type { OpenApiDocument } from './route-definition.js';
import { toExpressPath } from './route-paths.js';
import { joinPaths } from '../route-template.js';

/** An upper-case method and an express-style path from the service root, e.g. `GET /v2/policy/:id`. */
export interface RouteKey {
  method: string;
  path: string;
}

export interface RouteComparison {
  served: RouteKey[];
  documented: RouteKey[];
  /** Served but missing from the document. */
  undocumented: RouteKey[];
  /** Documented but not served. */
  unserved: RouteKey[];
}

/** What router 2.3's `listRoutes()` returns per layer (express 5's `app.router`). */
interface ListedRoute {
  path: string | RegExp;
  methods?: string[];
  router?: Listable;
}
interface Listable {
  listRoutes?: () => ListedRoute[];
}

const DOCUMENT_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Compares what an app serves with what its document describes. Only express Routers are walked: a sub-app
 * or middleware mounted with `app.use(path, fn)` is invisible, so services mount Routers.
 */
export function compareRoutes(app: { router: unknown }, document: OpenApiDocument): RouteComparison {
  const served = listServedRoutes(app.router as Listable);
  const documented = listDocumentedRoutes(document);
  const servedKeys = new Set(served.map(keyOf));
  const documentedKeys = new Set(documented.map(keyOf));
  return {
    served,
    documented,
    undocumented: served.filter((route) => !documentedKeys.has(keyOf(route))),
    unserved: documented.filter((route) => !servedKeys.has(keyOf(route))),
  };
}

/** Routes of a Router and the Routers mounted in it; `.all()` handlers and the automatic HEAD are left out. */
export function listServedRoutes(router: Listable, prefix = ''): RouteKey[] {
  if (typeof router.listRoutes !== 'function')
    throw new Error('router.listRoutes() is missing: router >= 2.3 is required');
  return router.listRoutes().flatMap((listed) => {
    const path = joinPaths(prefix, String(listed.path));
    if (listed.router) return listServedRoutes(listed.router, path);
    return (listed.methods ?? [])
      .filter((method) => method !== '*' && method !== 'HEAD')
      .map((method) => ({ method, path }));
  });
}

/** Where an operation is served: its own first server, else its path item's, else the document's. */
interface ServedFrom {
  servers?: { url: string }[];
}

/** Operations of the document, with their first server's path prepended and `{id}` written as `:id`. */
export function listDocumentedRoutes(document: OpenApiDocument): RouteKey[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) => {
    const operations = item as Record<string, ServedFrom> & ServedFrom;
    return DOCUMENT_METHODS.filter((method) => method in operations).map((method) => {
      const server = [operations[method], operations, document].find((level) => level?.servers?.[0]);
      return {
        method: method.toUpperCase(),
        path: joinPaths(serverPath(server?.servers?.[0]?.url ?? '/'), toExpressPath(path)),
      };
    });
  });
}

function serverPath(url: string): string {
  return url.startsWith('/') ? url : new URL(url).pathname;
}

function keyOf(route: RouteKey): string {
  return `${route.method} ${route.path}`;
}
