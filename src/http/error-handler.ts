import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { ZodError } from 'zod';
import { HttpError, errorKindForStatus, malformedJson, problemBody } from './errors.js';
import type { UrnScheme } from './urn.js';
import { validationError } from './validation.js';

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new HttpError('NotFound', `no route for ${req.method} ${req.path.slice(0, 200)}`));
};

/**
 * Last handler: every error becomes a problem body. HttpError keeps its kind, zod errors are a 400 naming the
 * field, body-parser and router errors keep their 4xx; anything else is a bug, logged and answered with 500.
 */
export function errorHandler(scheme: UrnScheme): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const error = toHttpError(err, req);
    logError(req, error);
    for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
    res.status(error.status).json(problemBody(scheme, error));
  };
}

function toHttpError(err: unknown, req: Request): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof ZodError) return validationError(err);
  const clientError = asClientError(err);
  if (clientError) return fromClientError(clientError);
  return new HttpError('InternalError', `unexpected error; request id ${req.id}`, { cause: err });
}

/**
 * Shape of the http-errors that body-parser raises (`expose` marks them safe to show) and of the router's
 * URIError for an undecodable path parameter.
 */
interface ClientError {
  status: number;
  message: string;
  type?: string;
  limit?: number;
}

function asClientError(err: unknown): ClientError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const candidate = err as Partial<ClientError> & { expose?: unknown };
  const isClientStatus =
    typeof candidate.status === 'number' && candidate.status >= 400 && candidate.status < 500;
  const safeToShow = candidate.expose === true || err instanceof URIError;
  return isClientStatus && safeToShow ? (candidate as ClientError) : undefined;
}

function fromClientError(err: ClientError): HttpError {
  const kind = errorKindForStatus(err.status) ?? 'BadRequest';
  switch (err.type) {
    case 'entity.parse.failed':
      return malformedJson(err);
    case 'entity.too.large':
      return new HttpError('PayloadTooLarge', `request body exceeds the limit of ${err.limit} bytes`, {
        cause: err,
      });
    case 'charset.unsupported':
      return new HttpError('UnsupportedMediaType', 'request body must be UTF-8', { cause: err });
    default:
      return new HttpError(kind, err.message, { cause: err });
  }
}

function logError(req: Request, error: HttpError): void {
  if (error.kind === 'DependencyUnavailable') {
    req.log.warn({ err: error.cause, detail: error.detail }, 'dependency unavailable');
  } else if (error.status >= 500) {
    req.log.error({ err: error.cause ?? error }, 'request failed with an unexpected error');
  } else {
    req.log.debug({ status: error.status, detail: error.detail }, 'request rejected');
  }
}
