import type { RequestHandler } from 'express';
import type { Logger } from '../observability/logger.js';
import { routeLabel } from './route-template.js';

export interface AccessLogOptions {
  /** Paths logged at debug level (probes and scrapes would drown everything else). */
  quietPaths?: ReadonlySet<string>;
  /** Paths whose successes are logged at debug; their server errors still at error. */
  hotPaths?: ReadonlySet<string>;
  /** The logger the request loggers are children of: a line below its level is not even built. */
  logger?: Pick<Logger, 'isLevelEnabled'>;
}

type AccessLevel = 'debug' | 'info' | 'error';

/** One line per request: method, path without query, route template, status, duration. */
export function accessLog(options: AccessLogOptions = {}): RequestHandler {
  const levelOf = (path: string, status: number): AccessLevel => {
    if (options.quietPaths?.has(path)) return 'debug';
    if (status >= 500) return 'error';
    return options.hotPaths?.has(path) ? 'debug' : 'info';
  };
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('close', () => {
      // req.path is relative to the router that is running; originalUrl is what the client asked for.
      const path = req.originalUrl.split('?', 1)[0] as string;
      const level = levelOf(path, res.statusCode);
      if (options.logger?.isLevelEnabled(level) === false) return;
      const line = {
        method: req.method,
        path,
        route: routeLabel(req),
        status: res.statusCode,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        ...(res.writableFinished ? {} : { aborted: true }),
      };
      req.log[level](line, 'request');
    });
    next();
  };
}
