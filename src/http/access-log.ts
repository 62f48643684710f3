import type { RequestHandler } from 'express';
import { routeLabel } from './route-template.js';

export interface AccessLogOptions {
  /** Paths logged at debug level (probes and scrapes would drown everything else). */
  quietPaths?: ReadonlySet<string>;
  /** Paths whose successes are logged at debug; their server errors still at error. */
  hotPaths?: ReadonlySet<string>;
}

/** One line per request: method, path without query, route template, status, duration. */
export function accessLog(options: AccessLogOptions = {}): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('close', () => {
      // req.path is relative to the router that is running; originalUrl is what the client asked for.
      const path = req.originalUrl.split('?', 1)[0] as string;
      const line = {
        method: req.method,
        path,
        route: routeLabel(req),
        status: res.statusCode,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        ...(res.writableFinished ? {} : { aborted: true }),
      };
      if (options.quietPaths?.has(path)) req.log.debug(line, 'request');
      else if (res.statusCode >= 500) req.log.error(line, 'request');
      else if (options.hotPaths?.has(path)) req.log.debug(line, 'request');
      else req.log.info(line, 'request');
    });
    next();
  };
}
