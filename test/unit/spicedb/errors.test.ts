import { describe, expect, it } from 'vitest';
import {
  GrpcCode,
  SpiceDBError,
  SpiceDBUnavailableError,
  toSpiceDBError,
} from '../../../src/spicedb/errors.js';

const INVALID_ARGUMENT = 3;
const FAILED_PRECONDITION = 9;

function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details });
}

describe('toSpiceDBError', () => {
  it.each([
    GrpcCode.UNAVAILABLE,
    GrpcCode.DEADLINE_EXCEEDED,
    GrpcCode.RESOURCE_EXHAUSTED,
    GrpcCode.UNAUTHENTICATED,
  ])('calls gRPC code %i an outage', (code) => {
    const error = toSpiceDBError('CheckPermission', grpcError(code, 'no'));
    expect(error).toBeInstanceOf(SpiceDBUnavailableError);
    expect(error.code).toBe(code);
  });

  it.each([INVALID_ARGUMENT, GrpcCode.NOT_FOUND, FAILED_PRECONDITION])(
    'calls gRPC code %i a refused call, not an outage',
    (code) => {
      const error = toSpiceDBError('WriteRelationships', grpcError(code, 'bad'));
      expect(error).toBeInstanceOf(SpiceDBError);
      expect(error).not.toBeInstanceOf(SpiceDBUnavailableError);
    },
  );

  it('calls an error without gRPC status an outage: the call never reached SpiceDB', () => {
    expect(toSpiceDBError('ReadSchema', new Error('Channel has been shut down'))).toBeInstanceOf(
      SpiceDBUnavailableError,
    );
  });

  it('names SpiceDB, the operation and the details, and keeps the cause', () => {
    const cause = grpcError(GrpcCode.UNAVAILABLE, 'connect ECONNREFUSED 127.0.0.1:1');
    const error = toSpiceDBError('CheckPermission', cause);
    expect(error.message).toBe(
      'SpiceDB CheckPermission failed: gRPC code 14: connect ECONNREFUSED 127.0.0.1:1',
    );
    expect(error.cause).toBe(cause);
    expect(error.name).toBe('SpiceDBUnavailableError');
  });

  it('passes SpiceDB errors through unchanged', () => {
    const error = new SpiceDBError('DiffSchema', INVALID_ARGUMENT, 'bad schema');
    expect(toSpiceDBError('EnsureSchema', error)).toBe(error);
  });
});
