import type { RequestHandler } from 'express';

/**
 * Runs `handlers` in order, each passing on with `next()`, without express's router: no path matching, no
 * layers. An error passed to `next`, thrown, or rejected by an async handler goes to the chain's `next`, as
 * express would pass it; so does the end of the chain.
 */
export function handlerChain(handlers: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let index = 0;
    const fail = (error: unknown) => next(error ?? new Error('Rejected promise'));
    const proceed = (error?: unknown): void => {
      if (error !== undefined && error !== null) return next(error);
      const handler = handlers[index++];
      if (handler === undefined) return next();
      try {
        const returned: unknown = handler(req, res, proceed);
        if (returned instanceof Promise) returned.catch(fail);
      } catch (thrown) {
        next(thrown);
      }
    };
    proceed();
  };
}
