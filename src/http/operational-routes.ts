import type { Router } from 'express';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { HttpError, problemBody } from './errors.js';
import { successEnvelope, successEnvelopeSchema } from './envelope.js';
import type { OpenApiDocument } from './openapi/route-definition.js';
import type { RouteKey } from './openapi/route-contract.js';
import { RouteRegistry } from './openapi/route-registry.js';
import { runReadinessChecks } from './readiness.js';
import type { CheckOutcome, ReadinessCheck } from './readiness.js';
import type { UrnScheme } from './urn.js';

export const OPERATIONAL_PATHS = {
  live: '/healthz/live',
  ready: '/healthz/ready',
  metrics: '/metrics',
  docs: '/docs',
} as const;

/** The operational endpoints; they are not part of the API document, so contract comparisons skip them. */
export const OPERATIONAL_ROUTES: readonly RouteKey[] = Object.values(OPERATIONAL_PATHS).map((path) => ({
  method: 'GET',
  path,
}));

export interface OperationalRoutesOptions {
  urn: UrnScheme;
  metricsRegistry: Registry;
  readinessChecks: readonly ReadinessCheck[];
  readinessTimeoutMs?: number;
  /** Served as JSON at GET /docs. */
  openApiDocument: OpenApiDocument;
}

const checkSchema = z.object({
  name: z.string(),
  status: z.enum(['ok', 'failed', 'timeout']),
  durationMs: z.number(),
});

/**
 * GET /healthz/live, /healthz/ready, /metrics and /docs, unauthenticated (kubelet and Prometheus carry no
 * user token, and none of them returns business data). Readiness answers 200 with every check, or 503 whose
 * detail names each broken dependency.
 */
export function operationalRouter(options: OperationalRoutesOptions): Router {
  const { urn } = options;
  const readinessSchema = successEnvelopeSchema(urn, { results: checkSchema });
  return new RouteRegistry()
    .add({
      method: 'get',
      path: OPERATIONAL_PATHS.live,
      operationId: 'getLiveness',
      summary: 'Liveness: the process is up',
      access: 'public',
      responses: { 200: { description: 'Live', schema: successEnvelopeSchema(urn) } },
      handler: () => ({ status: 200, body: successEnvelope(urn, { title: 'Live' }) }),
    })
    .add({
      method: 'get',
      path: OPERATIONAL_PATHS.ready,
      operationId: 'getReadiness',
      summary: 'Readiness: every dependency answers',
      access: 'public',
      responses: {
        200: { description: 'Ready', schema: readinessSchema },
        503: { description: 'Not ready; detail names the broken dependencies' },
      },
      handler: async ({ request }) => {
        const outcomes = await runReadinessChecks(options.readinessChecks, options.readinessTimeoutMs);
        const failed = outcomes.filter((outcome) => outcome.status !== 'ok');
        const results = outcomes.map(({ name, status, durationMs }) => ({ name, status, durationMs }));
        if (failed.length === 0)
          return { status: 200, body: successEnvelope(urn, { title: 'Ready', results }) };
        request.log.warn({ checks: failed }, 'not ready');
        return { status: 503, body: { ...problemBody(urn, notReady(failed)), results } };
      },
    })
    .add({
      method: 'get',
      path: OPERATIONAL_PATHS.metrics,
      operationId: 'getMetrics',
      summary: 'Metrics in the Prometheus text format',
      access: 'public',
      responses: { 200: { description: 'Metrics', mediaType: options.metricsRegistry.contentType } },
      handler: async () => ({ status: 200, body: await options.metricsRegistry.metrics() }),
    })
    .add({
      method: 'get',
      path: OPERATIONAL_PATHS.docs,
      operationId: 'getOpenApiDocument',
      summary: 'The OpenAPI 3.1 document of the API',
      access: 'public',
      responses: { 200: { description: 'OpenAPI document' } },
      handler: () => ({ status: 200, body: options.openApiDocument }),
    })
    .router();
}

function notReady(failed: readonly CheckOutcome[]): HttpError {
  const names = failed.map(
    (outcome) => `${outcome.name} (${outcome.status === 'timeout' ? 'timed out' : 'failed'})`,
  );
  return new HttpError('DependencyUnavailable', `not ready: ${names.join(', ')}`);
}
