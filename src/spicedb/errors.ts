/** gRPC status codes that this project tells apart (numbers fixed by the gRPC protocol). */
export const GrpcCode = {
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/**
 * Codes that say SpiceDB cannot serve us now, whatever we asked: callers answer 503 naming SpiceDB.
 * UNAUTHENTICATED and PERMISSION_DENIED are here because SpiceDB answers them only to a malformed or
 * unknown preshared key, which makes SpiceDB as unusable as a dead one.
 */
const UNAVAILABLE_CODES: ReadonlySet<number> = new Set([
  GrpcCode.UNAVAILABLE,
  GrpcCode.DEADLINE_EXCEEDED,
  GrpcCode.RESOURCE_EXHAUSTED,
  GrpcCode.UNAUTHENTICATED,
  GrpcCode.PERMISSION_DENIED,
]);

/** SpiceDB refused or failed a call. `code` is the gRPC status code, when there was one. */
export class SpiceDBError extends Error {
  override readonly name: string = 'SpiceDBError';

  constructor(
    readonly operation: string,
    readonly code: number | undefined,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`SpiceDB ${operation} failed: ${message}`, options);
  }
}

/** SpiceDB is unreachable, too slow (deadline), overloaded or refuses our credentials: a dependency outage. */
export class SpiceDBUnavailableError extends SpiceDBError {
  override readonly name = 'SpiceDBUnavailableError';
}

interface GrpcErrorLike {
  code?: unknown;
  details?: unknown;
  message?: unknown;
}

/** Maps whatever a gRPC call threw to SpiceDBError or SpiceDBUnavailableError. */
export function toSpiceDBError(operation: string, error: unknown): SpiceDBError {
  if (error instanceof SpiceDBError) return error;
  const { code, details, message } = (
    typeof error === 'object' && error !== null ? error : {}
  ) as GrpcErrorLike;
  const text = typeof details === 'string' && details !== '' ? details : String(message ?? error);
  if (typeof code !== 'number') {
    // No gRPC status: the call never reached SpiceDB (closed channel, connection torn down).
    return new SpiceDBUnavailableError(operation, undefined, text, { cause: error });
  }
  const ErrorClass = UNAVAILABLE_CODES.has(code) ? SpiceDBUnavailableError : SpiceDBError;
  return new ErrorClass(operation, code, `gRPC code ${code}: ${text}`, { cause: error });
}
