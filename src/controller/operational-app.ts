import type { Express } from 'express';
import type { Registry as MetricsRegistry } from 'prom-client';
import { z } from 'zod';
import { createHttpApp } from '../http/app.js';
import type { OpenApiDocument } from '../http/openapi/route-definition.js';
import { RouteTable } from '../http/openapi/route-table.js';
import { documentedOperationalRoutes } from '../http/operational-routes.js';
import type { ReadinessCheck } from '../http/readiness.js';
import type { UrnScheme } from '../http/urn.js';
import type { Logger } from '../observability/logger.js';

export interface OperationalAppOptions {
  /** `urn:<ERROR_NAMESPACE>:controller:<Kind>`. */
  urn: UrnScheme;
  metricsRegistry: MetricsRegistry;
  readinessChecks: readonly ReadinessCheck[];
  /** Reported by readiness. A replica that does not lead is still ready: it takes over when the leader goes. */
  leadership: () => { leader: boolean; identity: string | undefined };
  logger: Logger;
}

/** What readiness adds to its envelope: whether this replica leads, and its leader-election identity. */
const LEADERSHIP_SHAPE = {
  leader: z.boolean(),
  identity: z.string().optional(),
};

const DOCUMENT_INFO = {
  title: 'policy-grant-operator controller',
  version: '1',
  description:
    'The controller serves no API: liveness, readiness (with whether this replica leads), metrics and this ' +
    'document, at the root of its port.',
};

/** The controller's OpenAPI document: served at GET /docs, committed in docs/openapi/. */
export function controllerDocument(urn: UrnScheme): OpenApiDocument {
  return new RouteTable().document(
    { info: DOCUMENT_INFO, servers: [{ url: '/' }] },
    documentedOperationalRoutes(urn, LEADERSHIP_SHAPE),
  );
}

/**
 * The controller's HTTP app: the services' operational endpoints (liveness, readiness with the leadership of
 * this replica, metrics, /docs) and nothing else.
 */
export function operationalApp(options: OperationalAppOptions): Express {
  return createHttpApp({
    urn: options.urn,
    logger: options.logger,
    metricsRegistry: options.metricsRegistry,
    readinessChecks: options.readinessChecks,
    readinessFields: { shape: LEADERSHIP_SHAPE, values: options.leadership },
    openApiDocument: controllerDocument(options.urn),
    routers: [],
  });
}
