import type { Request, RequestHandler } from 'express';

declare module 'express-serve-static-core' {
  interface Request {
    /** The matched route's template including its mount path, e.g. `/v2/policy/:id`. */
    routeTemplate?: string;
  }
}

/** Label of requests that matched no route; raw paths never become labels. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * First handler of a route: records the template while `req.baseUrl` still holds the mount path (express
 * resets it once the router has finished).
 */
export const captureRouteTemplate: RequestHandler = (req, _res, next) => {
  req.routeTemplate = joinPaths(req.baseUrl, String((req.route as { path: unknown }).path));
  next();
};

export function routeLabel(req: Request): string {
  return req.routeTemplate ?? UNMATCHED_ROUTE;
}

export function joinPaths(prefix: string, path: string): string {
  const joined = `${prefix}/${path}`.replace(/\/{2,}/g, '/');
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}
