import { describe, expect, it } from 'vitest';
import { runReadinessChecks } from '../../../src/http/readiness.js';
import type { ReadinessCheck } from '../../../src/http/readiness.js';
import { sampleApp } from './support/sample-api.js';
import { capturedLogger, serve } from './support/serve.js';

const passing = (name: string): ReadinessCheck => ({ name, check: async () => undefined });
const failing = (name: string): ReadinessCheck => ({
  name,
  check: async () => {
    throw new Error('connection refused');
  },
});
const hanging = (name: string): ReadinessCheck => ({ name, check: () => new Promise(() => undefined) });

async function start(readinessChecks: ReadinessCheck[] = []) {
  const logs = capturedLogger();
  const sample = sampleApp({ logger: logs.logger, readinessChecks });
  return { ...sample, logs, base: await serve(sample.app) };
}

describe('liveness', () => {
  it('answers 200 while the process runs', async () => {
    const { base } = await start([failing('kubernetes')]);
    const response = await fetch(`${base}/healthz/live`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ type: 'urn:dx:acl:Success', title: 'Live' });
  });
});

describe('readiness', () => {
  it('answers 200 with every check when all pass', async () => {
    const { base } = await start([passing('kubernetes'), passing('spicedb')]);
    const response = await fetch(`${base}/healthz/ready`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      type: string;
      results: Array<{ name: string; status: string }>;
    };
    expect(body.type).toBe('urn:dx:acl:Success');
    expect(body.results.map(({ name, status }) => [name, status])).toEqual([
      ['kubernetes', 'ok'],
      ['spicedb', 'ok'],
    ]);
  });

  it('answers 503 naming each broken dependency, and times out a hanging check', async () => {
    const { base, logs } = await start([passing('kubernetes'), failing('spicedb'), hanging('jwks')]);
    const started = Date.now();
    const response = await fetch(`${base}/healthz/ready`);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(response.status).toBe(503);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: 'urn:dx:acl:DependencyUnavailable',
      detail: 'not ready: spicedb (failed), jwks (timed out)',
    });
    expect(body.results).toEqual([
      expect.objectContaining({ name: 'kubernetes', status: 'ok' }),
      expect.objectContaining({ name: 'spicedb', status: 'failed' }),
      expect.objectContaining({ name: 'jwks', status: 'timeout' }),
    ]);
    expect(JSON.stringify(body)).not.toContain('connection refused');
    expect(logs.text()).toContain('connection refused');
  });

  it('stays 200 when only a dependency that is not required fails, naming it', async () => {
    const { base } = await start([passing('kubernetes'), { ...failing('postgres'), required: false }]);
    const response = await fetch(`${base}/healthz/ready`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { title: string; results: unknown[] };
    expect(body.title).toBe('Ready, degraded: postgres (failed)');
    expect(body.results).toContainEqual(expect.objectContaining({ name: 'postgres', status: 'failed' }));
    const both = await start([failing('kubernetes'), { ...failing('postgres'), required: false }]);
    expect((await fetch(`${both.base}/healthz/ready`)).status, 'a required one still fails it').toBe(503);
  });

  it('aborts the signal of a check that timed out', async () => {
    let aborted = false;
    const [outcome] = await runReadinessChecks([
      {
        name: 'slow',
        timeoutMs: 20,
        check: (signal) =>
          new Promise((resolve) => {
            signal.addEventListener('abort', () => {
              aborted = true;
              resolve(undefined);
            });
          }),
      },
    ]);
    expect(outcome).toMatchObject({ name: 'slow', status: 'timeout', error: 'timed out after 20 ms' });
    expect(aborted).toBe(true);
  });
});

describe('metrics and docs', () => {
  it('serves the registry in the text exposition format', async () => {
    const { base, metricsRegistry } = await start();
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(metricsRegistry.contentType);
    expect(await response.text()).toContain('# TYPE policygrant_http_requests_total counter');
  });

  it('serves the OpenAPI document as JSON at /docs', async () => {
    const { base, document } = await start();
    const response = await fetch(`${base}/docs`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(document)));
  });

  it('answers other methods on operational paths with 405', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/healthz/ready`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});
