import { createHash } from 'node:crypto';
import { z } from 'zod';
import { HttpError } from '../../http/errors.js';

/**
 * The state of a search between pages: the snapshot the first page was read at (every later page is read at
 * exactly it, so pages neither miss nor repeat a result because of a change in between), where to continue
 * (SpiceDB's cursor, or the last id answered), and the search it belongs to. Opaque to the caller: base64url
 * JSON. It carries no secret: everything in it is the caller's own search, SpiceDB's revision and a position.
 */
export interface PageState {
  /** The search this token continues; a token of another search is a 400. */
  search: string;
  /** ZedToken of the first page's snapshot; absent for search/action, whose pages each pass the barrier. */
  snapshot?: string;
  /**
   * SpiceDB's LookupResources cursor. SpiceDB pins the first page's revision in it and accepts it only with the
   * first call's arguments: the token carries that call's consistency and limit, and later pages repeat them.
   */
  cursor?: string;
  /** The first page's consistency, as a ZedToken it was at least as fresh as; absent: minimize_latency. */
  atLeastAsFresh?: string;
  /** The first page's limit. */
  limit?: number;
  /** The last id answered (searches SpiceDB cannot page: their results are sorted by id). */
  after?: string;
}

const VERSION = 1;
const tokenSchema = z.strictObject({
  v: z.literal(VERSION),
  q: z.string(),
  s: z.string().min(1).optional(),
  c: z.string().min(1).optional(),
  a: z.string().min(1).optional(),
  f: z.string().min(1).optional(),
  l: z.number().int().min(1).optional(),
});

/** A short fingerprint of a search's canonical parts: what a page token is bound to. */
export function searchFingerprint(...parts: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
}

export function encodePageToken({
  search,
  snapshot,
  cursor,
  after,
  atLeastAsFresh,
  limit,
}: PageState): string {
  const token = {
    v: VERSION,
    q: search,
    ...(snapshot === undefined ? {} : { s: snapshot }),
    ...(cursor === undefined ? {} : { c: cursor }),
    ...(after === undefined ? {} : { a: after }),
    ...(atLeastAsFresh === undefined ? {} : { f: atLeastAsFresh }),
    ...(limit === undefined ? {} : { l: limit }),
  };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** The state in `token`, checked to belong to `search`; a 400 naming `page.token` otherwise. */
export function decodePageToken(token: string, search: string): PageState {
  const invalid = (why: string) => new HttpError('BadRequest', `page.token: ${why}`);
  let parsed: z.output<typeof tokenSchema>;
  try {
    parsed = tokenSchema.parse(JSON.parse(Buffer.from(token, 'base64url').toString('utf8')));
  } catch {
    throw invalid('not a next_token of this decision point');
  }
  if (parsed.q !== search) throw invalid('belongs to another search; repeat the first request');
  return {
    search: parsed.q,
    ...(parsed.s === undefined ? {} : { snapshot: parsed.s }),
    ...(parsed.c === undefined ? {} : { cursor: parsed.c }),
    ...(parsed.a === undefined ? {} : { after: parsed.a }),
    ...(parsed.f === undefined ? {} : { atLeastAsFresh: parsed.f }),
    ...(parsed.l === undefined ? {} : { limit: parsed.l }),
  };
}
