import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import { mergeTraceFields, traceFields } from './tracing.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** pino level name: fatal, error, warn, info, debug, trace or silent. */
  level: string;
  /** Component name, written as `name` on every line. */
  name?: string;
  /** Where lines go; standard output when absent (tests pass a stream they read). */
  destination?: DestinationStream;
}

export const REDACTED = '[REDACTED]';

/**
 * Paths whose values never reach a log line. pino's redaction matches fixed depths, so secrets are listed at
 * the depths where this code puts them (request objects, error causes, option bags one or two levels down).
 */
export const REDACTED_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  ...['token', 'accessToken', 'idToken', 'refreshToken', 'password', 'secret', 'clientSecret'].flatMap(
    (key) => [key, `*.${key}`, `*.*.${key}`],
  ),
];

/**
 * JSON lines, ISO timestamps, level names instead of numbers, secrets redacted, and `trace_id`/`span_id` on
 * every line written inside a span.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      ...(options.name === undefined ? {} : { name: options.name }),
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...REDACTED_PATHS], censor: REDACTED },
      mixin: traceFields,
      mixinMergeStrategy: mergeTraceFields,
    },
    options.destination,
  );
}
