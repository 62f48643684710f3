import express from 'express';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { createHttpApp } from '../../../src/http/app.js';
import { RouteTable } from '../../../src/http/openapi/route-table.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { capturedLogger, serve } from './support/serve.js';
import { sampleTable, testAuthentication, urn } from './support/sample-api.js';

/** An echo route, served as a hot route and, behind a marker the router adds, by the app's router. */
async function start() {
  const routes = new RouteTable({ authentication: testAuthentication, bodyLimit: 64 }).add({
    method: 'post',
    path: '/echo',
    operationId: 'echo',
    summary: 'Echoes the word',
    access: { role: 'echoer' },
    request: { body: z.strictObject({ word: z.string() }) },
    responses: { 201: { description: 'Echoed', schema: z.object({ word: z.string() }) } },
    handler: ({ body }) => {
      if (body.word === 'bug') throw new Error('a bug');
      return { status: 201, body: { word: body.word }, headers: { 'x-echo': 'yes' } };
    },
  });
  const viaRouter: RequestHandler = (_req, res, next) => (res.setHeader('x-via', 'router'), next());
  const metricsRegistry = createMetricsRegistry();
  const app = createHttpApp({
    urn,
    logger: capturedLogger().logger,
    metricsRegistry,
    readinessChecks: [],
    openApiDocument: routes.document({ info: { title: 't', version: '1' } }),
    hotRoutes: [routes.hotRoute('echo')],
    routers: [{ path: '/', router: express.Router().use(viaRouter, routes.router()) }],
  });
  const base = await serve(app);
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'x-test-user': 'alice echoer', 'content-type': 'application/json', ...headers },
      body,
    });
  return { base, post, metricsRegistry };
}

const answerOf = async (response: Response) => ({
  status: response.status,
  body: (await response.json()) as unknown,
  contentType: response.headers.get('content-type'),
  contentLength: response.headers.get('content-length'),
  requestId: response.headers.get('x-request-id'),
  echo: response.headers.get('x-echo'),
});

describe('a hot route', () => {
  it('answers past the router exactly as the router answers', async () => {
    const { post } = await start();
    const headers = { 'x-request-id': 'req-1' };
    const hot = await post('/echo', '{"word":"hi"}', headers);
    // The router matches a trailing slash too; the hot route only the exact path.
    const routed = await post('/echo/', '{"word":"hi"}', headers);
    expect([hot.headers.get('x-via'), routed.headers.get('x-via')]).toEqual([null, 'router']);
    const expected = {
      status: 201,
      body: { word: 'hi' },
      contentType: 'application/json; charset=utf-8',
      contentLength: '13',
      requestId: 'req-1',
      echo: 'yes',
    };
    expect(await answerOf(hot)).toEqual(expected);
    expect(await answerOf(routed)).toEqual(expected);
  });

  it('serves its path with a query string too', async () => {
    const { post } = await start();
    const response = await post('/echo?verbose=1', '{"word":"hi"}');
    expect([response.status, response.headers.get('x-via')]).toEqual([201, null]);
  });

  it('counts its requests under its route template', async () => {
    const { post, metricsRegistry } = await start();
    await post('/echo', '{"word":"hi"}');
    await post('/echo', '{"word":7}');
    const metrics = await metricsRegistry.metrics();
    expect(metrics).toContain('policygrant_http_requests_total{method="POST",route="/echo",code="201"} 1');
    expect(metrics).toContain('policygrant_http_requests_total{method="POST",route="/echo",code="400"} 1');
  });

  it('hands every error to the app’s error handler, which answers in problem bodies', async () => {
    const { post } = await start();
    const cases = [
      post('/echo', '{"word":"hi"}', { 'x-test-user': '' }),
      post('/echo', '{"word":"hi"}', { 'x-test-user': 'alice' }),
      post('/echo', '{"word":'),
      post('/echo', '{"word":"hi","other":1}'),
      post('/echo', JSON.stringify({ word: 'x'.repeat(100) })),
      post('/echo', 'word=hi', { 'content-type': 'text/plain' }),
      post('/echo', '{"word":"bug"}'),
    ];
    const answers = await Promise.all(
      cases.map(async (answer) => {
        const response = await answer;
        return [response.status, ((await response.json()) as { detail: string }).detail];
      }),
    );
    expect(answers).toEqual([
      [401, 'missing credentials'],
      [403, 'requires role echoer'],
      [400, 'request body is not valid JSON'],
      [400, expect.stringContaining('other')],
      [413, 'request body exceeds the limit of 64 bytes'],
      [415, 'request body must be application/json'],
      [500, expect.stringContaining('unexpected error')],
    ]);
  });

  it('leaves other methods on its path to the router', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/echo`, { headers: { 'x-test-user': 'alice echoer' } });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('is only for paths without parameters', () => {
    const routes = sampleTable();
    expect(() => routes.hotRoute('getThing')).toThrow('a hot route has no parameters');
    expect(() => routes.hotRoute('nothing')).toThrow('no route nothing is declared');
  });
});
