import type { RequestHandler } from 'express';
import { handlerChain } from './handler-chain.js';
import type { HotRoute } from './openapi/hot-route.js';

/**
 * The app's first layer: a request for exactly a hot route's method and path (any query string aside) runs
 * `common` (request id, access log, metrics) and the route's handler in a plain chain, past express's router;
 * every other request goes on to the app's router. Its errors go to the app's error handler.
 */
export function hotRouteLayer(
  routes: readonly HotRoute[],
  common: readonly RequestHandler[],
): RequestHandler {
  const served = new Map(
    routes.map((route) => [routeKey(route.method, route.path), handlerChain([...common, route.handler])]),
  );
  return (req, res, next) => {
    const hot = served.get(routeKey(req.method, pathOf(req.url)));
    if (hot) hot(req, res, next);
    else next();
  };
}

function routeKey(method: string, path: string): string {
  return `${method} ${path}`;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
