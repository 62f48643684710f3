import type { z } from 'zod';
import { HttpError } from './errors.js';

export type RequestPart = 'body' | 'query' | 'headers' | 'params';

const MAX_REPORTED_ISSUES = 5;
const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** Parses one part of a request; failures are a 400 whose detail names each field, e.g. `request[0].userId: Invalid UUID`. */
export function parseRequestPart<S extends z.ZodType>(
  schema: S,
  value: unknown,
  part: RequestPart,
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw validationError(parsed.error, part);
}

export function validationError(error: z.ZodError, part?: RequestPart): HttpError {
  return new HttpError('BadRequest', describeIssues(error, part), { cause: error });
}

export function describeIssues(error: z.ZodError, part?: RequestPart): string {
  const described = error.issues
    .slice(0, MAX_REPORTED_ISSUES)
    .map((issue) => `${fieldPath(issue.path) || part || 'input'}: ${issue.message}`);
  const more = error.issues.length - MAX_REPORTED_ISSUES;
  return more > 0 ? `${described.join('; ')}; and ${more} more` : described.join('; ');
}

export function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    const name = String(key);
    if (!PLAIN_KEY.test(name)) return `${text}[${JSON.stringify(name)}]`;
    return text === '' ? name : `${text}.${name}`;
  }, '');
}
