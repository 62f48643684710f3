import express from 'express';
import type { Request, RequestHandler } from 'express';
import { HttpError } from './errors.js';
import { isPlainJsonBody, readPlainJsonBody } from './plain-json-body.js';

export const DEFAULT_BODY_LIMIT = '1mb';

const PLAIN_JSON = 'application/json';
const JSON_MEDIA_TYPES = [PLAIN_JSON, 'application/*+json'];

export interface JsonBodyOptions {
  /** Largest accepted body, in bytes or as `'1mb'`; bigger bodies are a 413. */
  limit?: string | number;
  /** The media types accepted as JSON; any other is a 415. Defaults to JSON and every `+json` type. */
  mediaTypes?: readonly string[];
}

/**
 * Parses JSON bodies. A body of another media type is a 415; malformed JSON (400) and oversized bodies (413)
 * surface as body-parser errors that the error handler turns into problem bodies. No body leaves
 * `req.body` undefined for the schema to reject. The common body (plain `application/json` within the
 * limit) is read by a lean reader that answers as body-parser would.
 */
export function jsonBody(options: JsonBodyOptions = {}): RequestHandler {
  const mediaTypes = [...(options.mediaTypes ?? JSON_MEDIA_TYPES)];
  const limit = options.limit ?? DEFAULT_BODY_LIMIT;
  const parse = express.json({ limit, type: mediaTypes, strict: true });
  const expected = options.mediaTypes ? mediaTypes.join(' or ') : 'application/json';
  const readsPlainJson = mediaTypes.includes(PLAIN_JSON);
  const limitBytes = byteCount(limit);
  return (req, res, next) => {
    if (readsPlainJson && isPlainJsonBody(req, limitBytes)) {
      readPlainJsonBody(req, next);
      return;
    }
    if (hasContent(req) && req.is(mediaTypes) === false) {
      next(new HttpError('UnsupportedMediaType', `request body must be ${expected}`));
      return;
    }
    parse(req, res, next);
  };
}

const BYTE_UNITS: Readonly<Record<string, number>> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** `'32kb'` → 32768, as body-parser reads its limit (units of 1024). */
export function byteCount(limit: string | number): number {
  if (typeof limit === 'number') return limit;
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(limit.trim());
  if (!match) throw new Error(`not a byte count: ${limit}`);
  return Math.floor(Number(match[1]) * (BYTE_UNITS[(match[2] ?? 'b').toLowerCase()] as number));
}

/** An empty body (`content-length: 0`) has no media type to check. */
function hasContent(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}
