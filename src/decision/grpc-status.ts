/** gRPC status code names (numbers fixed by the gRPC protocol), for metric labels. */
const GRPC_STATUS_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

/** The name of a gRPC status code; `NO_STATUS` when the call never got one (e.g. the channel closed). */
export function grpcStatusName(code: number | undefined): string {
  if (code === undefined) return 'NO_STATUS';
  return GRPC_STATUS_NAMES[code] ?? 'UNKNOWN';
}
