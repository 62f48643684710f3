import express from 'express';
import type { ErrorRequestHandler, Router } from 'express';
import type { HotRoute } from '../http/openapi/hot-route.js';
import { DENIED } from './check-request.js';

/** What an error answer adds to its problem body so that it reads as a deny: the check's by default. */
export type Denial = Readonly<Record<string, unknown>>;

export const CHECK_DENIAL: Denial = Object.freeze({ result: DENIED });

/**
 * The app's error handler writes every error answer (status, problem body, logging); on a decision route this
 * adds the denial (`result: {allowed: false}` on the check) to the body it writes. Whatever went wrong (bad
 * input, credentials, SpiceDB, a bug), a client that reads the decision reads a deny.
 */
function denyInErrorAnswers(denial: Denial): ErrorRequestHandler {
  return (err, _req, res, next) => {
    const writeJson = res.json.bind(res);
    res.json = ((body: unknown) =>
      writeJson(
        typeof body === 'object' && body !== null ? { ...body, ...denial } : body,
      )) as typeof res.json;
    next(err);
  };
}

/** `route` with every error answer marked as a deny. */
export function failClosedHotRoute(route: HotRoute, denial: Denial = CHECK_DENIAL): HotRoute {
  const deny = denyInErrorAnswers(denial);
  return {
    ...route,
    handler: (req, res, next) =>
      route.handler(req, res, (error?: unknown) =>
        error === undefined ? next() : deny(error, req, res, next),
      ),
  };
}

/** `routes` with every error answer marked as a deny. */
export function failClosed(routes: Router, denial: Denial = CHECK_DENIAL): Router {
  return express.Router().use(routes).use(denyInErrorAnswers(denial));
}
