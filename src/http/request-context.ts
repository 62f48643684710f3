import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../observability/logger.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** The request id: the caller's `x-request-id` when sane, else a fresh UUID. */
    id: string;
    /** A child logger carrying `reqId`. */
    log: Logger;
  }
}

export const REQUEST_ID_HEADER = 'x-request-id';

/** Accepted incoming ids: short and printable, so they are safe in logs and headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:+=/-]{1,128}$/;

export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get(REQUEST_ID_HEADER);
    const id = incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    // Made on first use: most requests on a hot path log nothing, and a child logger costs more than its check.
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', {
      get: () => (child ??= logger.child({ reqId: id })),
      set: (value: Logger) => (child = value),
      configurable: true,
    });
    res.setHeader(REQUEST_ID_HEADER, id);
    next();
  };
}
