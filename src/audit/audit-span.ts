import { SpanKind } from '@opentelemetry/api';
import type { SpanDescription } from '../observability/tracing.js';

/**
 * The client span of one audit operation in PostgreSQL, named as OpenTelemetry's database conventions say
 * (`SELECT audit.records`): the system, the operation and the table, never a query's values.
 */
export function auditSpan(operation: 'SELECT' | 'INSERT', collection = 'audit.records'): SpanDescription {
  return {
    name: `${operation} ${collection}`,
    kind: SpanKind.CLIENT,
    attributes: {
      'db.system': 'postgresql',
      'db.system.name': 'postgresql',
      'db.operation.name': operation,
      'db.collection.name': collection,
    },
  };
}
