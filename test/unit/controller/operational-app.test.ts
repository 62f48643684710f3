import type { AddressInfo } from 'node:net';
import { Counter } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { controllerDocument, operationalApp } from '../../../src/controller/operational-app.js';
import { compareRoutes } from '../../../src/http/openapi/route-contract.js';
import { createUrnScheme } from '../../../src/http/urn.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import type { ReadinessCheck } from '../../../src/http/readiness.js';

let close: (() => void) | undefined;
afterEach(() => close?.());

function app(checks: ReadinessCheck[], leader: boolean, errorNamespace = 'dx') {
  const registry = createMetricsRegistry();
  new Counter({ name: 'sample_total', help: 'A sample.', registers: [registry] });
  return operationalApp({
    urn: createUrnScheme('controller', errorNamespace),
    metricsRegistry: registry,
    readinessChecks: checks,
    leadership: () => ({ leader, identity: 'replica-1' }),
    logger: silentLogger,
  });
}

async function serve(checks: ReadinessCheck[], leader: boolean, errorNamespace?: string): Promise<string> {
  const server = app(checks, leader, errorNamespace).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  close = () => server.close();
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const ok = (name: string): ReadinessCheck => ({ name, check: async () => undefined });

describe("the controller's operational endpoints", () => {
  it('answer ready with the checks and leadership; a replica that does not lead is ready too', async () => {
    const base = await serve([ok('kubernetes'), ok('spicedb'), ok('caches')], false);
    const response = await fetch(`${base}/healthz/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      type: 'urn:dx:controller:Success',
      leader: false,
      identity: 'replica-1',
      results: [
        { name: 'kubernetes', status: 'ok' },
        { name: 'spicedb', status: 'ok' },
        { name: 'caches', status: 'ok' },
      ],
    });
  });

  it('answer 503 naming the broken dependency, without the error text', async () => {
    const broken: ReadinessCheck = {
      name: 'spicedb',
      check: () => Promise.reject(new Error('secret detail')),
    };
    const base = await serve([ok('kubernetes'), broken], true);
    const response = await fetch(`${base}/healthz/ready`);
    expect(response.status).toBe(503);
    const body = await response.text();
    expect(JSON.parse(body)).toMatchObject({ detail: 'not ready: spicedb (failed)', leader: true });
    expect(body).not.toContain('secret detail');
  });

  it('serve liveness and metrics', async () => {
    const base = await serve([], true);
    expect((await fetch(`${base}/healthz/live`)).status).toBe(200);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toContain('sample_total 0');
  });

  it('spell their types in the configured URN namespace (ERROR_NAMESPACE)', async () => {
    const base = await serve([ok('kubernetes')], true, 'acme');
    expect(await (await fetch(`${base}/healthz/live`)).json()).toMatchObject({
      type: 'urn:acme:controller:Success',
    });
    expect(await (await fetch(`${base}/nowhere`)).json()).toMatchObject({
      type: 'urn:acme:controller:NotFound',
    });
  });
});

describe("the controller's OpenAPI document", () => {
  it('documents exactly the routes it serves, each with an operationId', () => {
    const document = controllerDocument(createUrnScheme('controller'));
    const comparison = compareRoutes(app([], true), document);
    expect(comparison.undocumented).toEqual([]);
    expect(comparison.unserved).toEqual([]);
    expect(comparison.served.map((route) => `${route.method} ${route.path}`).sort()).toEqual([
      'GET /docs',
      'GET /healthz/live',
      'GET /healthz/ready',
      'GET /metrics',
    ]);
    const operationIds = Object.values(document.paths ?? {}).map(
      (item) => (item as { get?: { operationId?: string } }).get?.operationId,
    );
    expect(operationIds.sort()).toEqual(['getLiveness', 'getMetrics', 'getOpenApiDocument', 'getReadiness']);
  });

  it('serves it at GET /docs, readiness described with the leadership fields', async () => {
    const base = await serve([], true);
    const served = (await (await fetch(`${base}/docs`)).json()) as { paths: Record<string, unknown> };
    const document = controllerDocument(createUrnScheme('controller'));
    expect(served).toEqual(JSON.parse(JSON.stringify(document)));
    expect(JSON.stringify(served.paths['/healthz/ready'])).toContain('"leader"');
  });
});
