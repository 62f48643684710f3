import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Runs `handlers` in order, each passing on with `next()`, without express's router: no path matching, no
 * layers. An error passed to `next`, thrown, or rejected by an async handler goes to the chain's `next`, as
 * express would pass it; so does the end of the chain.
 */
export function handlerChain(handlers: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => runFrom(0, handlers, req, res, next);
}

function runFrom(
  index: number,
  handlers: readonly RequestHandler[],
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  const handler = handlers[index];
  if (handler === undefined) return next();
  const proceed = (error?: unknown) => {
    if (error !== undefined && error !== null) next(error);
    else runFrom(index + 1, handlers, req, res, next);
  };
  try {
    const returned: unknown = handler(req, res, proceed);
    if (returned instanceof Promise) returned.catch((error: unknown) => next(error ?? rejected()));
  } catch (error) {
    next(error);
  }
}

function rejected(): Error {
  return new Error('Rejected promise');
}
