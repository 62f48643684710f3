import express from 'express';
import type { ErrorRequestHandler, Router } from 'express';
import type { HotRoute } from '../http/openapi/hot-route.js';
import { DENIED } from './check-request.js';

/**
 * The app's error handler writes every error answer (status, problem body, logging); on the check route this
 * adds `result: {allowed: false}` to the body it writes. Whatever went wrong (bad input, credentials,
 * SpiceDB, a bug), a client that reads `result.allowed` reads a deny.
 */
const denyInErrorAnswers: ErrorRequestHandler = (err, _req, res, next) => {
  const writeJson = res.json.bind(res);
  res.json = ((body: unknown) =>
    writeJson(
      typeof body === 'object' && body !== null ? { ...body, result: DENIED } : body,
    )) as typeof res.json;
  next(err);
};

/** `route` with every error answer marked as a deny. */
export function failClosedHotRoute(route: HotRoute): HotRoute {
  return {
    ...route,
    handler: (req, res, next) =>
      route.handler(req, res, (error?: unknown) =>
        error === undefined ? next() : denyInErrorAnswers(error, req, res, next),
      ),
  };
}

/** `routes` with every error answer marked as a deny. */
export function failClosed(routes: Router): Router {
  return express.Router().use(routes).use(denyInErrorAnswers);
}
