import type { Router } from 'express';
import { prometheusContentType, type Registry as MetricsRegistry } from 'prom-client';
import { z } from 'zod';
import type { Drain } from './drain.js';
import { HttpError, problemBody } from './errors.js';
import { successEnvelope, successEnvelopeSchema } from './envelope.js';
import type { OpenApiDocument } from './openapi/route-definition.js';
import { RouteTable } from './openapi/route-table.js';
import { runReadinessChecks } from './readiness.js';
import type { CheckOutcome, ReadinessCheck } from './readiness.js';
import type { UrnScheme } from './urn.js';

export const OPERATIONAL_PATHS = {
  live: '/healthz/live',
  ready: '/healthz/ready',
  metrics: '/metrics',
  docs: '/docs',
} as const;

export interface OperationalRoutesOptions {
  urn: UrnScheme;
  metricsRegistry: MetricsRegistry;
  readinessChecks: readonly ReadinessCheck[];
  readinessTimeoutMs?: number;
  /** Served as JSON at GET /docs. */
  openApiDocument: OpenApiDocument;
  /** Fields every readiness answer carries besides the envelope (the controller: whether this replica leads). */
  readinessFields?: ReadinessFields;
  /** The server's drain: once it began, readiness answers 503 at once. */
  drain?: Pick<Drain, 'draining'>;
}

export interface ReadinessFields {
  shape: z.ZodRawShape;
  values: () => Record<string, unknown>;
}

/** What the handlers of a document-only instance would use: nothing reads it before a request comes. */
const NOT_SERVING = new Proxy(
  {},
  {
    get() {
      throw new Error('operational routes built for a document only were asked to serve');
    },
  },
) as never;

/**
 * The operational routes as a service's OpenAPI document describes them: the same declarations that serve
 * them (operationalRoutes), with nothing behind the handlers.
 */
export function documentedOperationalRoutes(urn: UrnScheme, readinessShape?: z.ZodRawShape): RouteTable {
  return operationalRoutes({
    urn,
    metricsRegistry: NOT_SERVING,
    readinessChecks: [],
    openApiDocument: NOT_SERVING,
    ...(readinessShape ? { readinessFields: { shape: readinessShape, values: NOT_SERVING } } : {}),
  });
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
  return operationalRoutes(options).router();
}

/** The declarations behind operationalRouter; documents include them (documentedOperationalRoutes). */
export function operationalRoutes(options: OperationalRoutesOptions): RouteTable {
  const { urn, readinessFields } = options;
  const fields = () => readinessFields?.values() ?? {};
  const readinessSchema = successEnvelopeSchema(urn, { results: checkSchema }).extend(
    readinessFields?.shape ?? {},
  );
  return new RouteTable()
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
        if (options.drain?.draining) {
          return { status: 503, body: { ...problemBody(urn, SHUTTING_DOWN), results: [], ...fields() } };
        }
        const outcomes = await runReadinessChecks(options.readinessChecks, options.readinessTimeoutMs);
        const failed = outcomes.filter((outcome) => outcome.status !== 'ok');
        const results = outcomes.map(({ name, status, durationMs }) => ({ name, status, durationMs }));
        if (failed.every((outcome) => !outcome.required)) {
          const title = failed.length === 0 ? 'Ready' : `Ready, degraded: ${describeFailures(failed)}`;
          return { status: 200, body: { ...successEnvelope(urn, { title, results }), ...fields() } };
        }
        request.log.warn({ checks: failed }, 'not ready');
        return { status: 503, body: { ...problemBody(urn, notReady(failed)), results, ...fields() } };
      },
    })
    .add({
      method: 'get',
      path: OPERATIONAL_PATHS.metrics,
      operationId: 'getMetrics',
      summary: 'Metrics in the Prometheus text format',
      access: 'public',
      responses: { 200: { description: 'Metrics', mediaType: prometheusContentType } },
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
    });
}

const SHUTTING_DOWN = new HttpError('DependencyUnavailable', 'not ready: shutting down');

function notReady(failed: readonly CheckOutcome[]): HttpError {
  return new HttpError('DependencyUnavailable', `not ready: ${describeFailures(failed)}`);
}

function describeFailures(failed: readonly CheckOutcome[]): string {
  return failed
    .map((outcome) => `${outcome.name} (${outcome.status === 'timeout' ? 'timed out' : 'failed'})`)
    .join(', ');
}
