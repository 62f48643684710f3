import { Readable } from 'node:stream';
import type { RequestHandler, Response } from 'express';
import { handlerChain } from '../handler-chain.js';
import type { AnyRouteDefinition, RouteResult } from './route-definition.js';
import { JSON_MEDIA_TYPE } from './route-definition.js';
import { toExpressPath, pathParameterNames } from './route-paths.js';
import { accessHandlers, bodyParsers, routeCall, sendResult } from './route-router.js';
import type { RouterOptions } from './route-router.js';

/** A route the app serves before its router: an exact method and path from the service root. */
export interface HotRoute {
  /** Upper case, e.g. `POST`. */
  method: string;
  path: string;
  handler: RequestHandler;
}

/**
 * A declared route served outside express's router (see createHttpApp's `hotRoutes`): the same access
 * handlers, body reader, validation and handler as its express route, run in a plain chain, and a JSON answer
 * written with one writeHead and end. For a route table mounted at the service root, and paths without
 * parameters (matched exactly).
 */
export function hotRoute(definition: AnyRouteDefinition, options: RouterOptions): HotRoute {
  const name = `${definition.method.toUpperCase()} ${definition.path}`;
  if (pathParameterNames(definition.path).length > 0)
    throw new Error(`${name}: a hot route has no parameters`);
  const path = toExpressPath(definition.path);
  const call = routeCall(definition, options.validateResponses ?? false);
  const answer: RequestHandler = async (req, res) => {
    const { result, mediaType } = await call(req);
    if (isPlainJson(result, mediaType)) writeJson(res, result);
    else sendResult(res, result, mediaType);
  };
  const chain = handlerChain([
    ...accessHandlers(definition, options.authentication),
    ...bodyParsers(definition, options),
    answer,
  ]);
  return {
    method: definition.method.toUpperCase(),
    path,
    handler: (req, res, next) => {
      req.routeTemplate = path;
      chain(req, res, next);
    },
  };
}

function isPlainJson(result: RouteResult, mediaType: string): boolean {
  return mediaType === JSON_MEDIA_TYPE && result.body !== undefined && !(result.body instanceof Readable);
}

/** What express's res.json writes (no ETag: not on a hot route), in one writeHead and end. */
function writeJson(res: Response, result: RouteResult): void {
  const text = JSON.stringify(result.body);
  res.writeHead(result.status, {
    ...result.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
