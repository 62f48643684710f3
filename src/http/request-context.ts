import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { Logger } from '../observability/logger.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id: the caller's `x-request-id` when non-empty and within its bound, else a fresh UUID. */
    id: string;
    /** A child logger carrying `reqId`. */
    log: Logger;
  }
}

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * The longest `x-request-id` a request's logs, spans and SpiceDB calls carry. Any value node's HTTP parser let
 * in is answered back exactly as it came (the header is sent back byte for byte: node reads and writes header
 * values as latin1); a route that declares `requestIdHeaders` refuses a longer one with a 400 naming it.
 */
export const MAX_REQUEST_ID_LENGTH = 1_024;

/** The request id header, as a route declares it for a request: bounded. */
export const requestIdHeaders = z.object({
  [REQUEST_ID_HEADER]: z
    .string()
    .max(MAX_REQUEST_ID_LENGTH)
    .optional()
    .meta({
      description:
        `Any value up to ${MAX_REQUEST_ID_LENGTH} characters, answered back exactly; ` +
        'absent: the response carries a generated one',
    }),
});

/** The request id header of a response: whatever the request carried, even over the bound, or a generated one. */
export const requestIdResponseHeaders = z.object({
  [REQUEST_ID_HEADER]: z.string().meta({
    description: "The request's `x-request-id` exactly as sent; a generated UUID when it had none",
  }),
});

/**
 * The request id and its child logger, and the response's `x-request-id`: the caller's value exactly as sent
 * (AuthZEN's MUST), never replaced. Logs stay safe by how the id is logged: a structured field that pino
 * writes JSON-escaped, so no value can start a line or a field of its own.
 */
export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get(REQUEST_ID_HEADER);
    const id = incoming && incoming.length <= MAX_REQUEST_ID_LENGTH ? incoming : randomUUID();
    req.id = id;
    // Made on first use: most requests on a hot path log nothing, and a child logger costs more than its check.
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', {
      get: () => (child ??= logger.child({ reqId: id })),
      set: (value: Logger) => (child = value),
      configurable: true,
    });
    res.setHeader(REQUEST_ID_HEADER, incoming ?? id);
    if (incoming !== undefined && BEYOND_ASCII.test(incoming)) bodyAsBytes(res);
    next();
  };
}

const BEYOND_ASCII = /[\u0080-\uffff]/;

/**
 * Node writes the header block together with a first body chunk given as a string, in that string's encoding:
 * a latin1 header value then goes out as UTF-8, two bytes where the client sent one. Given bytes instead, node
 * writes the header block on its own, as latin1, so the value goes back as it came. Only for such values: it
 * costs a copy of each chunk.
 */
function bodyAsBytes(res: Response): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const asBytes = (args: unknown[]) =>
    typeof args[0] === 'string'
      ? [
          Buffer.from(args[0], typeof args[1] === 'string' ? (args[1] as BufferEncoding) : 'utf8'),
          ...args.slice(2),
        ]
      : args;
  res.end = ((...args: unknown[]) => end(...asBytes(args))) as Response['end'];
  res.write = ((...args: unknown[]) => write(...asBytes(args))) as Response['write'];
}
