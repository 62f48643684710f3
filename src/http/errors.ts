import { urnOf } from './urn.js';
import type { UrnScheme } from './urn.js';

/**
 * Error kinds, their status and default title. The kind is the last segment of the body's `type` URN.
 * The spec's "Validation" class is spelled `BadRequest`; "mandatory dependency failure" is
 * `DependencyUnavailable`.
 */
export const ERROR_KINDS = {
  BadRequest: { status: 400, title: 'Bad request' },
  Unauthorized: { status: 401, title: 'Unauthorized' },
  Forbidden: { status: 403, title: 'Forbidden' },
  NotFound: { status: 404, title: 'Not found' },
  MethodNotAllowed: { status: 405, title: 'Method not allowed' },
  Conflict: { status: 409, title: 'Conflict' },
  PreconditionFailed: { status: 412, title: 'Precondition failed' },
  PayloadTooLarge: { status: 413, title: 'Payload too large' },
  UnsupportedMediaType: { status: 415, title: 'Unsupported media type' },
  PreconditionRequired: { status: 428, title: 'Precondition required' },
  TooManyRequests: { status: 429, title: 'Too many requests' },
  InternalError: { status: 500, title: 'Internal server error' },
  DependencyUnavailable: { status: 503, title: 'Dependency unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorKind = keyof typeof ERROR_KINDS;

export type ResponseHeaders = Readonly<Record<string, string | readonly string[]>>;

export interface HttpErrorOptions {
  title?: string;
  headers?: ResponseHeaders;
  cause?: unknown;
}

/** An error that becomes the problem body `{type, title, detail}` with the kind's status. */
export class HttpError extends Error {
  readonly status: number;
  readonly title: string;
  readonly headers: ResponseHeaders;

  constructor(
    readonly kind: ErrorKind,
    readonly detail: string,
    options: HttpErrorOptions = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpError';
    this.status = ERROR_KINDS[kind].status;
    this.title = options.title ?? ERROR_KINDS[kind].title;
    this.headers = options.headers ?? {};
  }
}

/** 503 naming the dependency, e.g. `kubernetes` or `spicedb`. */
export function dependencyUnavailable(dependency: string, cause?: unknown): HttpError {
  return new HttpError('DependencyUnavailable', `${dependency} is unavailable`, { cause });
}

/** 503 with Retry-After: `what` has more work queued than it takes; nothing was wrong with the request. */
export class BusyError extends HttpError {
  constructor(what: string) {
    super('DependencyUnavailable', `${what} is busy; retry later`, { headers: { 'retry-after': '1' } });
    this.name = 'BusyError';
  }
}

export function busy(what: string): BusyError {
  return new BusyError(what);
}

export function tooManyRequests(detail: string, retryAfterSeconds?: number): HttpError {
  const headers: ResponseHeaders =
    retryAfterSeconds === undefined ? {} : { 'retry-after': String(Math.ceil(retryAfterSeconds)) };
  return new HttpError('TooManyRequests', detail, { headers });
}

/** 400 for a body that is not JSON, or (strict) not an object or array. */
export function malformedJson(cause?: unknown): HttpError {
  return new HttpError('BadRequest', 'request body is not valid JSON', { cause });
}

export function methodNotAllowed(method: string, allowed: readonly string[]): HttpError {
  return new HttpError('MethodNotAllowed', `${method} is not allowed here; allowed: ${allowed.join(', ')}`, {
    headers: { allow: allowed.join(', ') },
  });
}

export interface ProblemBody {
  type: string;
  title: string;
  detail: string;
}

export function problemBody(scheme: UrnScheme, error: HttpError): ProblemBody {
  return { type: urnOf(scheme, error.kind), title: error.title, detail: error.detail };
}

export function errorKindForStatus(status: number): ErrorKind | undefined {
  return (Object.keys(ERROR_KINDS) as ErrorKind[]).find((kind) => ERROR_KINDS[kind].status === status);
}
