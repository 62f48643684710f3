import express from 'express';
import type { Express, Router } from 'express';
import type { Registry as MetricsRegistry } from 'prom-client';
import type { TrustedProxies } from './client-address.js';
import type { Logger } from '../observability/logger.js';
import { accessLog } from './access-log.js';
import type { Drain } from './drain.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { hotRouteLayer } from './hot-route-layer.js';
import { httpMetrics } from './http-metrics.js';
import type { HotRoute } from './openapi/hot-route.js';
import type { OpenApiDocument } from './openapi/route-definition.js';
import { OPERATIONAL_PATHS, operationalRouter, type ReadinessFields } from './operational-routes.js';
import type { ReadinessCheck } from './readiness.js';
import { requestContext } from './request-context.js';
import { requestSpan } from './request-span.js';
import type { UrnScheme } from './urn.js';

export interface MountedRouter {
  /** Mount path, e.g. the ACL base path `/v2`; `/` for the root. */
  path: string;
  router: Router;
}

export interface HttpAppOptions {
  urn: UrnScheme;
  logger: Logger;
  metricsRegistry: MetricsRegistry;
  readinessChecks: readonly ReadinessCheck[];
  readinessTimeoutMs?: number;
  /** The server's drain: readiness fails once it began. */
  drain?: Drain;
  openApiDocument: OpenApiDocument;
  readinessFields?: ReadinessFields;
  routers: readonly MountedRouter[];
  /**
   * Routes served before express's router (exact method and path), with the same request id, access log and
   * metrics; every other request, other methods on their paths included, goes through the routers.
   */
  hotRoutes?: readonly HotRoute[];
  /** Hot paths whose successes are logged at debug, not info; their server errors still at error. */
  hotPaths?: readonly string[];
  /** Express's `trust proxy`, the proxies' addresses and subnets: who may name the client address. */
  trustProxy?: TrustedProxies;
}

/**
 * A service's express app: its hot routes, request id and child logger, server span, access log, HTTP
 * metrics, the operational endpoints, the service's routers, then the 404 and the error handler that answer
 * in problem bodies.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  if (options.trustProxy !== undefined) app.set('trust proxy', [...options.trustProxy]);
  const common = [
    requestContext(options.logger),
    requestSpan,
    accessLog({
      quietPaths: new Set(Object.values(OPERATIONAL_PATHS)),
      hotPaths: new Set(options.hotPaths),
      logger: options.logger,
    }),
    httpMetrics(options.metricsRegistry),
  ];
  if (options.hotRoutes?.length) app.use(hotRouteLayer(options.hotRoutes, common));
  app.use(...common);
  app.use(
    operationalRouter({
      urn: options.urn,
      metricsRegistry: options.metricsRegistry,
      readinessChecks: options.readinessChecks,
      ...(options.drain ? { drain: options.drain } : {}),
      openApiDocument: options.openApiDocument,
      ...(options.readinessTimeoutMs === undefined ? {} : { readinessTimeoutMs: options.readinessTimeoutMs }),
      ...(options.readinessFields ? { readinessFields: options.readinessFields } : {}),
    }),
  );
  for (const mounted of options.routers) app.use(mounted.path, mounted.router);
  app.use(notFoundHandler);
  app.use(errorHandler(options.urn));
  return app;
}
