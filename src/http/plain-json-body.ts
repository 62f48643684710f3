import type { Request } from 'express';
import { HttpError, malformedJson } from './errors.js';

/** `application/json`, without a charset or in UTF-8: the bodies clients send. */
const PLAIN_JSON_TYPE = /^application\/json[\t ]*(?:;[\t ]*charset=("?)utf-8\1[\t ]*)?$/i;
const FIRST_NON_WHITESPACE = /^[ \t\n\r]*([^ \t\n\r]|$)/;
const BYTE_ORDER_MARK = '\ufeff';

/**
 * Whether the plain reader may read this body: a JSON body in UTF-8, not compressed, whose content-length is
 * within `limit` bytes. Every other body (other media types, charsets, encodings, chunked, empty, too large)
 * is body-parser's, whose checks and errors answer it.
 */
export function isPlainJsonBody(req: Request, limit: number): boolean {
  const { headers } = req;
  if (headers['transfer-encoding'] !== undefined) return false;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  if (!PLAIN_JSON_TYPE.test(headers['content-type'] ?? '')) return false;
  const length = Number(headers['content-length']);
  return Number.isInteger(length) && length > 0 && length <= limit;
}

/**
 * Reads a plain JSON body (isPlainJsonBody) into `req.body` as body-parser would (strict: an object or an
 * array; a byte order mark dropped), with less work per request: no media-type negotiation, no decoder
 * streams. Malformed JSON is the same 400 as body-parser's; a request the client aborted, its 400.
 */
export function readPlainJsonBody(req: Request, done: (error?: unknown) => void): void {
  const chunks: Buffer[] = [];
  const collect = (chunk: Buffer) => chunks.push(chunk);
  const aborted = (cause: unknown) => {
    req.off('end', ended);
    done(new HttpError('BadRequest', 'request aborted', { cause }));
  };
  const ended = () => {
    req.off('error', aborted);
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    try {
      req.body = parseStrictJson(bytes.toString('utf8'));
    } catch (error) {
      done(error);
      return;
    }
    done();
  };
  req.on('data', collect);
  req.once('end', ended);
  req.once('error', aborted);
}

function parseStrictJson(decoded: string): unknown {
  const text = decoded.startsWith(BYTE_ORDER_MARK) ? decoded.slice(1) : decoded;
  // body-parser's special case: an empty body is an empty object (here: a lone byte order mark).
  if (text.length === 0) return {};
  const first = FIRST_NON_WHITESPACE.exec(text)?.[1];
  if (first !== '{' && first !== '[') throw malformedJson();
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw malformedJson(error);
  }
}
