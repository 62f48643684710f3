import express from 'express';
import type { Request, RequestHandler } from 'express';
import { HttpError } from './errors.js';

export const DEFAULT_BODY_LIMIT = '1mb';

const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

export interface JsonBodyOptions {
  /** Largest accepted body, in bytes or as `'1mb'`; bigger bodies are a 413. */
  limit?: string | number;
  /** The media types accepted as JSON; any other is a 415. Defaults to JSON and every `+json` type. */
  mediaTypes?: readonly string[];
}

/**
 * Parses JSON bodies. A body of another media type is a 415; malformed JSON (400) and oversized bodies (413)
 * surface as body-parser errors that the error handler turns into problem bodies. No body leaves
 * `req.body` undefined for the schema to reject.
 */
export function jsonBody(options: JsonBodyOptions = {}): RequestHandler {
  const mediaTypes = [...(options.mediaTypes ?? JSON_MEDIA_TYPES)];
  const parse = express.json({ limit: options.limit ?? DEFAULT_BODY_LIMIT, type: mediaTypes, strict: true });
  const expected = options.mediaTypes ? mediaTypes.join(' or ') : 'application/json';
  return (req, res, next) => {
    if (hasContent(req) && req.is(mediaTypes) === false) {
      next(new HttpError('UnsupportedMediaType', `request body must be ${expected}`));
      return;
    }
    parse(req, res, next);
  };
}

/** An empty body (`content-length: 0`) has no media type to check. */
function hasContent(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}
