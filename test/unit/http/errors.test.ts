import express from 'express';
import { describe, expect, it } from 'vitest';
import { errorHandler } from '../../../src/http/error-handler.js';
import {
  ERROR_KINDS,
  HttpError,
  dependencyUnavailable,
  methodNotAllowed,
  problemBody,
  tooManyRequests,
} from '../../../src/http/errors.js';
import type { ErrorKind } from '../../../src/http/errors.js';
import { requestContext } from '../../../src/http/request-context.js';
import { createUrnScheme } from '../../../src/http/urn.js';
import { capturedLogger, serve } from './support/serve.js';

const EXPECTED_STATUS: Record<ErrorKind, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  MethodNotAllowed: 405,
  Conflict: 409,
  PreconditionFailed: 412,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  PreconditionRequired: 428,
  TooManyRequests: 429,
  InternalError: 500,
  DependencyUnavailable: 503,
};

/** An app whose only route throws the error named by the path. */
async function throwingApp(service: string, errors: Record<string, HttpError>) {
  const app = express();
  app.use(requestContext(capturedLogger().logger));
  app.get('/:name', (req) => {
    throw errors[req.params.name as string];
  });
  app.use(errorHandler(createUrnScheme(service)));
  return serve(app);
}

describe('HttpError', () => {
  it('covers exactly the kinds of the status table', () => {
    expect(Object.keys(ERROR_KINDS).sort()).toEqual(Object.keys(EXPECTED_STATUS).sort());
  });

  it.each(Object.entries(EXPECTED_STATUS))('%s answers %i with its urn', async (kind, status) => {
    const base = await throwingApp('acl', { it: new HttpError(kind as ErrorKind, 'why') });
    const response = await fetch(`${base}/it`);
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({
      type: `urn:dx:acl:${kind}`,
      title: ERROR_KINDS[kind as ErrorKind].title,
      detail: 'why',
    });
  });

  it('uses the decision service name and a configured namespace in the urn', () => {
    const error = new HttpError('Forbidden', 'no', { title: 'Access denied' });
    expect(problemBody(createUrnScheme('authz', 'example'), error)).toEqual({
      type: 'urn:example:authz:Forbidden',
      title: 'Access denied',
      detail: 'no',
    });
  });

  it('sends the headers an error carries', async () => {
    const base = await throwingApp('acl', {
      limited: tooManyRequests('slow down', 2.5),
      method: methodNotAllowed('PUT', ['GET', 'HEAD']),
    });
    const limited = await fetch(`${base}/limited`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    const method = await fetch(`${base}/method`);
    expect(method.headers.get('allow')).toBe('GET, HEAD');
    expect(((await method.json()) as { detail: string }).detail).toBe(
      'PUT is not allowed here; allowed: GET, HEAD',
    );
  });

  it('names the dependency of a 503 and keeps the cause for the logs', () => {
    const cause = new Error('UNAVAILABLE: connection refused');
    const error = dependencyUnavailable('spicedb', cause);
    expect(error).toMatchObject({
      status: 503,
      kind: 'DependencyUnavailable',
      detail: 'spicedb is unavailable',
    });
    expect(error.cause).toBe(cause);
  });
});
