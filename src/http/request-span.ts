import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { Request, RequestHandler, Response } from 'express';
import {
  linksToTraceparent,
  REQUEST_ID_ATTRIBUTE,
  tracer,
  tracingOn,
  withRequestId,
} from '../observability/tracing.js';
import { routeLabel, UNMATCHED_ROUTE } from './route-template.js';

/**
 * A server span per request, named `METHOD /route/template` once the route is known (`METHOD` alone for a
 * request no route matched). The request's handlers and the listeners on its streams (the body readers) run
 * inside it, and so does every Kubernetes, SpiceDB and PostgreSQL call they make. After requestContext: the
 * span carries the request id.
 *
 * Invariant: the caller's W3C `traceparent` is untrusted. The span starts a trace of ours (our trace id, our
 * sampler's decision on a root) with a span link to the caller's span: the span is made before anyone is
 * authenticated, on routes the internet may reach, so a caller must not choose whether its request is
 * exported (a flood of `-01` parents past a sampling ratio of 0) nor the trace id our log lines carry.
 */
export const requestSpan: RequestHandler = (req, res, next) => {
  if (!tracingOn()) return next();
  const span = tracer().startSpan(
    req.method,
    {
      kind: SpanKind.SERVER,
      root: true,
      links: linksToTraceparent(req.get('traceparent')),
      attributes: {
        'http.request.method': req.method,
        'url.path': req.originalUrl.split('?', 1)[0] as string,
        [REQUEST_ID_ATTRIBUTE]: req.id,
      },
    },
    ROOT_CONTEXT,
  );
  const active = trace.setSpan(withRequestId(ROOT_CONTEXT, req.id), span);
  context.bind(active, req);
  context.bind(active, res);
  res.once('close', () => endRequestSpan(span, req, res));
  context.with(active, next);
};

function endRequestSpan(span: Span, req: Request, res: Response): void {
  const route = routeLabel(req);
  if (route !== UNMATCHED_ROUTE) {
    span.updateName(`${req.method} ${route}`);
    span.setAttribute('http.route', route);
  }
  span.setAttribute('http.response.status_code', res.statusCode);
  // Server spans: a 5xx is the server's error, a 4xx the client's (OpenTelemetry's HTTP conventions).
  if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  if (!res.writableFinished) span.setAttribute('policygrant.aborted', true);
  span.end();
}
