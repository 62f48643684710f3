import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Principal } from '../../auth/principal.js';
import { canonicalJson } from '../../http/canonical-json.js';
import { HttpError } from '../../http/errors.js';

/**
 * The state of a search between pages: the snapshot the first page was read at (every later page is read at
 * exactly it, so pages neither miss nor repeat a result because of a change in between), and where to continue
 * (SpiceDB's cursor, or the last id answered).
 */
export interface PageState {
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

/** A page state as a token gave it back. */
export interface ContinuedPage extends PageState {
  /**
   * When the search's first page chose its snapshot (ms since the epoch): every change the Watch delivered
   * before then is in the snapshot. A token's age is counted from it.
   */
  readAt: number;
}

/** What a token is bound to: it continues exactly one request of exactly one caller. */
export interface PageBinding {
  /** requestDigest of the request that returned the token. */
  request: string;
  /** callerDigest of the caller it was returned to. */
  caller: string;
}

/** A token older than this is refused: the client starts over rather than page through an old snapshot. */
export const PAGE_TOKEN_TTL_MS = 10 * 60_000;
/** The shortest key accepted: HMAC-SHA256's own output length. */
export const MIN_PAGE_TOKEN_KEY_BYTES = 32;

const VERSION = 2;
const payloadSchema = z.strictObject({
  v: z.literal(VERSION),
  r: z.string(),
  w: z.string(),
  t: z.number().int(),
  s: z.string().min(1).optional(),
  c: z.string().min(1).optional(),
  a: z.string().min(1).optional(),
  f: z.string().min(1).optional(),
  l: z.number().int().min(1).optional(),
});

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** A short fingerprint of a search's canonical parts: the key of what the service holds for a search. */
export function searchFingerprint(...parts: readonly string[]): string {
  return digest(JSON.stringify(parts));
}

/**
 * The digest of a search request as a page token binds it: the route and every member of the request as the
 * service read it (subject, resource, action, context). `page` is left out: the token carries the page size
 * itself, which a later request may repeat or omit but not change (`continuedLimit`).
 */
export function requestDigest(route: string, request: { page?: unknown }): string {
  const { page: _page, ...members } = request;
  return digest(canonicalJson([route, members]));
}

/**
 * The page size of a request that continues `state`: the token's. AuthZEN requires `page.limit` unchanged, and
 * its own pagination example sends only the token on the second request, so an absent limit continues; a
 * different one is a 400 (the limit as `requested`, after its default).
 */
export function continuedLimit(state: PageState, requested: number | undefined): number | undefined {
  if (requested !== undefined && state.limit !== undefined && requested !== state.limit) {
    throw invalid('continues another request: every member and page.limit must be as in the first request');
  }
  return state.limit;
}

/** The digest of a caller as a page token binds it: its kind, id, client id and ServiceAccount. */
export function callerDigest(principal: Principal | undefined): string {
  if (principal === undefined) return '';
  const { kind, id, clientId, serviceAccount } = principal;
  return digest(JSON.stringify([kind, id, clientId ?? null, serviceAccount ?? null]));
}

/**
 * Issues and reads the search's page tokens: base64url JSON of the page state, the binding and the issue time,
 * then `.` and its HMAC-SHA256 under the first key. A token signed with any of the keys is accepted, so keys
 * rotate by putting the new one first and dropping the old one once its tokens are past PAGE_TOKEN_TTL_MS.
 * The state itself is no secret (the caller's own search, SpiceDB's revision, a position); the signature keeps
 * a caller from choosing it: an edited snapshot would read the relationships as they were before a revocation.
 */
export class PageTokens {
  private readonly keys: readonly Buffer[];

  /** `keys`: the first signs, all verify; none: a random key of this process (tokens do not cross replicas). */
  constructor(
    keys: readonly Uint8Array[] = [],
    readonly now: () => number = Date.now,
  ) {
    this.keys =
      keys.length > 0 ? keys.map((key) => Buffer.from(key)) : [randomBytes(MIN_PAGE_TOKEN_KEY_BYTES)];
    if (this.keys.some((key) => key.length < MIN_PAGE_TOKEN_KEY_BYTES)) {
      throw new Error(`a page token key has at least ${MIN_PAGE_TOKEN_KEY_BYTES} bytes`);
    }
  }

  /** A token of `state`, whose search read its snapshot at `readAt` (the first page's, carried on). */
  issue(state: PageState, binding: PageBinding, readAt: number): string {
    const payload = {
      v: VERSION,
      r: binding.request,
      w: binding.caller,
      t: readAt,
      ...(state.snapshot === undefined ? {} : { s: state.snapshot }),
      ...(state.cursor === undefined ? {} : { c: state.cursor }),
      ...(state.after === undefined ? {} : { a: state.after }),
      ...(state.atLeastAsFresh === undefined ? {} : { f: state.atLeastAsFresh }),
      ...(state.limit === undefined ? {} : { l: state.limit }),
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body, this.keys[0] as Buffer).toString('base64url')}`;
  }

  /** The state in `token`, checked to be signed by a key, bound to `binding` and young enough; else a 400. */
  read(token: string, binding: PageBinding): ContinuedPage {
    const payload = this.verified(token);
    if (payload.w !== binding.caller) throw invalid('issued to another caller');
    if (payload.r !== binding.request) {
      throw invalid('continues another request: every member and page.limit must be as in the first request');
    }
    const age = this.now() - payload.t;
    if (age > PAGE_TOKEN_TTL_MS) throw invalid('expired; repeat the first request');
    return {
      readAt: payload.t,
      ...(payload.s === undefined ? {} : { snapshot: payload.s }),
      ...(payload.c === undefined ? {} : { cursor: payload.c }),
      ...(payload.a === undefined ? {} : { after: payload.a }),
      ...(payload.f === undefined ? {} : { atLeastAsFresh: payload.f }),
      ...(payload.l === undefined ? {} : { limit: payload.l }),
    };
  }

  private sign(body: string, key: Buffer): Buffer {
    return createHmac('sha256', key).update(body).digest();
  }

  private verified(token: string): z.output<typeof payloadSchema> {
    const [body = '', signature = '', ...rest] = token.split('.');
    const given = Buffer.from(signature, 'base64url');
    const signed = rest.length === 0 && this.keys.some((key) => equalDigests(this.sign(body, key), given));
    if (!signed) throw invalid('not a next_token of this decision point');
    try {
      return payloadSchema.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
    } catch {
      throw invalid('not a next_token of this decision point');
    }
  }
}

function equalDigests(expected: Buffer, given: Buffer): boolean {
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function invalid(why: string): HttpError {
  return new HttpError('BadRequest', `page.token: ${why}`);
}
