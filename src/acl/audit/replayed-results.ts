import type { RouteResult } from '../../http/openapi/route-definition.js';

// A create answered again from its Idempotency-Key answers exactly as the first time; only its audit record
// says that nothing was created. The handler marks the result, the route's audit reads the mark.

const replayed = new WeakSet<RouteResult>();

/** Marks `result` as the first answer of a request given again (nothing was carried out). */
export function markReplayed(result: RouteResult): RouteResult {
  replayed.add(result);
  return result;
}

export function isReplayed(result: RouteResult): boolean {
  return replayed.has(result);
}

/** The detail of a replayed action's record. */
export const REPLAY_DETAIL = 'replayed: answered again from its Idempotency-Key; nothing was created';
