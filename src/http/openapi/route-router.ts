import express from 'express';
import { Readable, pipeline } from 'node:stream';
import type { Request, RequestHandler, Response, Router } from 'express';
import type { z } from 'zod';
import { requireAnyRole } from '../auth-middleware.js';
import { HttpError, methodNotAllowed } from '../errors.js';
import { jsonBody } from '../json-body.js';
import { captureRouteTemplate } from '../route-template.js';
import { parseRequestPart } from '../validation.js';
import type { RequestPart } from '../validation.js';
import { JSON_MEDIA_TYPE, requiredRoles } from './route-definition.js';
import type {
  AnyRouteDefinition,
  ApiAuthentication,
  CallerRule,
  ResponseDefinition,
  RouteAccess,
  RouteInput,
  RouteRequestSchemas,
  RouteResult,
} from './route-definition.js';
import { toExpressPath } from './route-paths.js';
import { bodyMediaTypes, effectiveResponses } from './route-responses.js';

export interface RouterOptions {
  authentication?: ApiAuthentication;
  bodyLimit?: string | number;
  /** Check every result against the declaration (status and schema); a mismatch is a bug, so a 500. */
  validateResponses?: boolean;
}

/**
 * One express route per declared path: per method, capture template → authenticate → role → JSON body →
 * validate and call the handler; any other method on the path is a 405 naming the allowed ones.
 */
export function buildRouter(routes: readonly AnyRouteDefinition[], options: RouterOptions): Router {
  const router = express.Router();
  for (const [path, declared] of groupByPath(routes)) {
    const route = router.route(path);
    for (const definition of declared) route[definition.method](...handlersFor(definition, options));
    route.all(captureRouteTemplate, rejectOtherMethods(allowedMethods(declared)));
  }
  return router;
}

function groupByPath(routes: readonly AnyRouteDefinition[]): Map<string, AnyRouteDefinition[]> {
  const groups = new Map<string, AnyRouteDefinition[]>();
  for (const route of routes) {
    const path = toExpressPath(route.path);
    groups.set(path, [...(groups.get(path) ?? []), route]);
  }
  return groups;
}

function handlersFor(definition: AnyRouteDefinition, options: RouterOptions): RequestHandler[] {
  return [
    captureRouteTemplate,
    ...accessHandlers(definition, options.authentication),
    ...bodyParsers(definition, options),
    invoke(definition, options.validateResponses ?? false),
  ];
}

/** Authentication, the per-subject limit and the role or caller rule, as the route's access asks. */
export function accessHandlers(
  definition: AnyRouteDefinition,
  authentication?: ApiAuthentication,
): RequestHandler[] {
  if (definition.access === 'public') return [];
  if (!authentication) throw new Error(`${definition.operationId} needs authentication, none is configured`);
  const limit = authentication.subjectLimit?.(definition);
  const authenticated = [authentication.middleware, ...(limit ? [limit] : [])];
  if (definition.access === 'authenticated') return authenticated;
  if ('callers' in definition.access) return [...authenticated, requireCaller(definition.access.callers)];
  return [...authenticated, requireAnyRole(requiredRoles(definition.access))];
}

/** 403 with the rule's requirement unless the rule admits the authenticated caller; who was refused is logged. */
function requireCaller(rule: CallerRule): RequestHandler {
  return (req, _res, next) => {
    const { principal } = req;
    if (!principal) next(new HttpError('Unauthorized', 'missing credentials'));
    else if (rule.admits(principal)) next();
    else {
      req.log.info({ caller: principal.id, callerKind: principal.kind }, 'caller refused by the route');
      next(new HttpError('Forbidden', rule.requirement));
    }
  };
}

/** The JSON body reader of a route that declares a body; none otherwise. */
export function bodyParsers(definition: AnyRouteDefinition, options: RouterOptions): RequestHandler[] {
  const { body, bodies } = definition.request ?? {};
  if (bodies) return [jsonBody({ limit: options.bodyLimit, mediaTypes: bodyMediaTypes(definition) })];
  return body ? [jsonBody({ limit: options.bodyLimit })] : [];
}

/** The body schema: the route's one, or the one of the request's media type (jsonBody let only those in). */
function bodySchemaFor(definition: AnyRouteDefinition, req: Request): z.ZodType | undefined {
  const { body, bodies } = definition.request ?? {};
  if (!bodies) return body;
  const mediaType = Object.keys(bodies).find((type) => req.is(type));
  if (mediaType === undefined) {
    throw new HttpError('BadRequest', `body: required, as ${bodyMediaTypes(definition).join(' or ')}`);
  }
  return bodies[mediaType];
}

export interface RouteAnswer {
  result: RouteResult;
  /** The declared media type of the result's status. */
  mediaType: string;
}

/** Parses each declared part of the request, calls the handler and, when asked, checks its result. */
export function routeCall(
  definition: AnyRouteDefinition,
  validateResponses: boolean,
): (req: Request) => Promise<RouteAnswer> {
  const responses = effectiveResponses(definition);
  const schemas = definition.request ?? {};
  // A part is read only when declared: express parses the query string on each read of req.query.
  const parse = (part: RequestPart, value: () => unknown, schema: z.ZodType | undefined = schemas[part]) =>
    schema ? parseRequestPart(schema, value(), part) : undefined;
  return async (req) => {
    // Each part has been parsed by the schema the declaration typed it with.
    const input = {
      body: parse('body', () => req.body, bodySchemaFor(definition, req)),
      query: parse('query', () => req.query),
      headers: parse('headers', () => req.headers),
      params: parse('params', () => req.params),
      principal: req.principal,
      request: req,
    } as RouteInput<RouteRequestSchemas, RouteAccess>;
    const result = await definition.handler(input);
    const response = responses[result.status];
    if (validateResponses) checkAgainstDeclaration(definition, result, response);
    return { result, mediaType: response?.mediaType ?? JSON_MEDIA_TYPE };
  };
}

function invoke(definition: AnyRouteDefinition, validateResponses: boolean): RequestHandler {
  const call = routeCall(definition, validateResponses);
  return async (req, res) => {
    const { result, mediaType } = await call(req);
    sendResult(res, result, mediaType);
  };
}

function checkAgainstDeclaration(
  definition: AnyRouteDefinition,
  result: RouteResult,
  response: ResponseDefinition | undefined,
): void {
  const route = `${definition.operationId} (${definition.method.toUpperCase()} ${definition.path})`;
  if (!response) throw new Error(`${route} answered undeclared status ${result.status}`);
  const parsed = response.schema?.safeParse(result.body);
  if (parsed && !parsed.success) {
    throw new Error(`${route} answered ${result.status} with a body that does not match its schema`, {
      cause: parsed.error,
    });
  }
}

export function sendResult(res: Response, result: RouteResult, mediaType: string): void {
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
  res.status(result.status);
  if (result.body === undefined) res.end();
  // A stream (e.g. an NDJSON export) is piped as it comes; a failure midway cuts the response short.
  else if (result.body instanceof Readable) pipeline(result.body, res.type(mediaType), () => undefined);
  else if (mediaType === JSON_MEDIA_TYPE) res.json(result.body);
  else res.type(mediaType).send(result.body);
}

function allowedMethods(declared: readonly AnyRouteDefinition[]): string[] {
  const methods = declared.map((definition) => definition.method.toUpperCase());
  return methods.includes('GET') ? [...methods, 'HEAD'] : methods;
}

function rejectOtherMethods(allowed: readonly string[]): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'OPTIONS') {
      res.setHeader('allow', allowed.join(', ')).status(204).end();
      return;
    }
    next(methodNotAllowed(req.method, allowed));
  };
}
