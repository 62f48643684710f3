import { HttpError } from '../../../../src/http/errors.js';

/** The kind of HttpError `action` throws; undefined when it throws nothing. */
export function errorKindOf(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return error instanceof HttpError ? error.kind : 'not an HttpError';
  }
}
