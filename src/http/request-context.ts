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
    req.id = incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.log = logger.child({ reqId: req.id });
    res.setHeader(REQUEST_ID_HEADER, req.id);
    next();
  };
}
