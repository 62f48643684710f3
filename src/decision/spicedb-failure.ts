import { HttpError } from '../http/errors.js';
import type { SpiceDBError } from '../spicedb/errors.js';
import type { DecisionMetrics } from './decision-metrics.js';
import { grpcStatusName } from './grpc-status.js';

/**
 * A failure of SpiceDB as every decision route answers it: counted by its gRPC status, then a 503 naming spicedb
 * and saying what it could not do (`evaluate the check`), denied.
 */
export function spicedbUnavailable(
  error: SpiceDBError,
  metrics: Pick<DecisionMetrics, 'backendError'>,
  what: string,
): HttpError {
  metrics.backendError(grpcStatusName(error.code));
  return new HttpError('DependencyUnavailable', `spicedb could not ${what}; denied`, { cause: error });
}
