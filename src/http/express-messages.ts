import { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerOptions } from 'node:http';

/** What an express app gives its requests and responses: the prototypes it sets on them. */
export interface ExpressPrototypes {
  request: object;
  response: object;
}

/**
 * Server options whose requests and responses are born with an express app's prototypes (`app.request`,
 * `app.response`). Express sets those prototypes on every request with Object.setPrototypeOf; on an object
 * that already has them that is a no-op, while changing a live object's prototype makes V8 give up the
 * optimised shapes of every later property access on it, in node's HTTP code as in express's. On the
 * decision service that cost about half of a cached check's CPU (docs/decision-service.md, "Express's
 * prototypes"). Express has no option for it (expressjs/express#5998), so the classes are made here.
 */
export function expressServerOptions(app: ExpressPrototypes): ServerOptions {
  return {
    IncomingMessage: bornWith(IncomingMessage, app.request),
    ServerResponse: bornWith(ServerResponse, app.response),
  };
}

/**
 * A constructor whose instances are `base`'s, with `prototype` as theirs from the start. Node's IncomingMessage
 * and ServerResponse are constructor functions, so they can initialise an object made by `new` on this one
 * (Reflect.construct with this one as new.target gives the same objects, but measured slower per request).
 */
function bornWith<T>(base: T, prototype: object): T {
  const initialise = base as unknown as (...args: unknown[]) => void;
  function Constructor(this: object, ...args: unknown[]): void {
    Reflect.apply(initialise, this, args);
  }
  Constructor.prototype = prototype;
  return Constructor as unknown as T;
}
