import { describe, expect, it } from 'vitest';
import { MAX_REQUEST_ID_LENGTH } from '../../../src/http/request-context.js';
import { capturedLogger, send, serve } from './support/serve.js';
import { sampleApp } from './support/sample-api.js';

const USER = '3f8e0c4e-2a7b-4c55-9d61-0e9f3b1a2c7d';
const authenticated = { 'x-test-user': USER };

async function start() {
  const logs = capturedLogger();
  const sample = sampleApp({ logger: logs.logger });
  return { ...sample, logs, base: await serve(sample.app) };
}

async function problem(response: Response) {
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return (await response.json()) as { type: string; title: string; detail: string };
}

describe('request bodies', () => {
  const post = (base: string, body: string, contentType = 'application/json') =>
    fetch(`${base}/v2/policy`, {
      method: 'POST',
      headers: { ...authenticated, 'content-type': contentType },
      body,
    });

  it('accepts a valid JSON body', async () => {
    const { base } = await start();
    const response = await post(base, JSON.stringify({ request: [{ userId: USER, itemId: 'urn:item:1' }] }));
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({
      type: 'urn:dx:acl:Success',
      title: 'created',
      detail: `1 created by ${USER}`,
      results: [{ policyId: 'p0' }],
    });
  });

  it('answers malformed JSON with a 400 problem body', async () => {
    const { base } = await start();
    const response = await post(base, '{"request": [');
    expect(response.status).toBe(400);
    expect(await problem(response)).toEqual({
      type: 'urn:dx:acl:BadRequest',
      title: 'Bad request',
      detail: 'request body is not valid JSON',
    });
  });

  it('answers a body over the limit with 413', async () => {
    const { base } = await start();
    const response = await post(base, JSON.stringify({ request: [], padding: 'x'.repeat(2048) }));
    expect(response.status).toBe(413);
    expect(await problem(response)).toMatchObject({
      type: 'urn:dx:acl:PayloadTooLarge',
      detail: 'request body exceeds the limit of 1024 bytes',
    });
  });

  it('answers a body of another media type with 415', async () => {
    const { base } = await start();
    const response = await post(base, 'request=1', 'application/x-www-form-urlencoded');
    expect(response.status).toBe(415);
    expect(await problem(response)).toMatchObject({ type: 'urn:dx:acl:UnsupportedMediaType' });
  });

  it('names the failing field of a body that does not match the schema', async () => {
    const { base } = await start();
    const response = await post(
      base,
      JSON.stringify({ request: [{ userId: 'not-a-uuid', itemId: 'urn:item:1' }] }),
    );
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toBe('request[0].userId: Invalid UUID');
  });

  it('answers a missing body with a 400 that names the body', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/policy`, { method: 'POST', headers: authenticated });
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toMatch(/^body: /);
  });

  it('validates headers and names the header', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/policy`, {
      method: 'POST',
      headers: { ...authenticated, 'content-type': 'application/json', 'idempotency-key': 'k'.repeat(65) },
      body: JSON.stringify({ request: [{ userId: USER, itemId: 'i' }] }),
    });
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toMatch(/^idempotency-key: /);
  });
});

describe('query and path validation', () => {
  it('coerces and bounds query parameters, naming the parameter', async () => {
    const { base } = await start();
    const admin = { 'x-test-user': `${USER} cos_admin` };
    const ok = await fetch(`${base}/v2/policy/platform?limit=20`, { headers: admin });
    expect(((await ok.json()) as { paginationInfo: unknown }).paginationInfo).toEqual({
      offset: 0,
      limit: 20,
      totalHits: 0,
    });
    const tooBig = await fetch(`${base}/v2/policy/platform?limit=5000`, { headers: admin });
    expect(tooBig.status).toBe(400);
    expect((await problem(tooBig)).detail).toMatch(/^limit: /);
  });

  it('validates path parameters', async () => {
    const { base } = await start();
    expect(await (await fetch(`${base}/v2/things/t-7`)).json()).toEqual({ id: 't-7' });
    const response = await fetch(`${base}/v2/things/bad`);
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toMatch(/^id: /);
  });

  it('answers an undecodable path parameter with 400, not 500', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/things/%E0%A4%A`);
    expect(response.status).toBe(400);
    expect((await problem(response)).type).toBe('urn:dx:acl:BadRequest');
  });
});

describe('routing', () => {
  it('answers an unknown route with a 404 problem body', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/nowhere`);
    expect(response.status).toBe(404);
    expect(await problem(response)).toMatchObject({
      type: 'urn:dx:acl:NotFound',
      detail: 'no route for GET /v2/nowhere',
    });
  });

  it('answers a known path with a wrong method with 405 and Allow', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/things/t-1`, { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, DELETE, HEAD');
    expect((await problem(response)).type).toBe('urn:dx:acl:MethodNotAllowed');
  });

  it('answers OPTIONS with the allowed methods', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/policy`, { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('answers 204 without a body', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/things/t-1`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });
});

describe('errors', () => {
  it('turns an unexpected error into a logged 500 that leaks nothing', async () => {
    const { base, logs } = await start();
    const response = await fetch(`${base}/v2/failures/bug`, { headers: { 'x-request-id': 'req-500' } });
    expect(response.status).toBe(500);
    const body = await problem(response);
    expect(body).toEqual({
      type: 'urn:dx:acl:InternalError',
      title: 'Internal server error',
      detail: 'unexpected error; request id req-500',
    });
    const logged = logs.lines().find((line) => line.msg === 'request failed with an unexpected error');
    expect(logged).toMatchObject({
      level: 'error',
      reqId: 'req-500',
      err: { message: 'internal detail that must not leak' },
    });
  });

  it('turns a zod error thrown by a handler into a 400 naming the field', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/failures/zod`);
    expect(response.status).toBe(400);
    expect((await problem(response)).detail).toBe('count: Invalid input: expected number, received string');
  });

  it('answers a dependency outage with a 503 naming the dependency', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/failures/kubernetes`);
    expect(response.status).toBe(503);
    expect(await problem(response)).toEqual({
      type: 'urn:dx:acl:DependencyUnavailable',
      title: 'Dependency unavailable',
      detail: 'kubernetes is unavailable',
    });
  });

  it('answers a handler result that breaks its declaration with a 500', async () => {
    const { base } = await start();
    const response = await fetch(`${base}/v2/things/wrong-status`, { method: 'DELETE' });
    expect(response.status).toBe(500);
  });
});

describe('request ids and logs', () => {
  it('echoes a sane incoming x-request-id and logs it', async () => {
    const { base, logs } = await start();
    const response = await fetch(`${base}/v2/things/t-1`, { headers: { 'x-request-id': 'abc-123' } });
    expect(response.headers.get('x-request-id')).toBe('abc-123');
    expect(await logs.line('request')).toMatchObject({
      reqId: 'abc-123',
      method: 'GET',
      path: '/v2/things/t-1',
      route: '/v2/things/:id',
      status: 200,
    });
  });

  it('answers any request id back exactly and logs it as one escaped field', async () => {
    const { base, logs } = await start();
    // A quote, a tab, a backslash, latin1 and NEL: all an HTTP header may carry, none may break a log line.
    const id = 'a "b"\tc\\d \u00ff\u0085 } {"level":60}';
    const answer = await send(`${base}/v2/things/t-1`, { headers: { 'x-request-id': id } });
    expect(answer.headers['x-request-id']).toBe(id);
    expect(await logs.line('request')).toMatchObject({ reqId: id, status: 200 });
    expect(logs.text()).not.toContain('\t');
  });

  it('answers an over-long request id back, and logs a generated one in its place', async () => {
    const { base, logs } = await start();
    const id = 'x'.repeat(MAX_REQUEST_ID_LENGTH + 1);
    const answer = await send(`${base}/v2/things/t-1`, { headers: { 'x-request-id': id } });
    expect(answer.headers['x-request-id']).toBe(id);
    expect((await logs.line('request')).reqId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('generates a request id when none is sent', async () => {
    const { base } = await start();
    const first = (await fetch(`${base}/v2/things/t-1`)).headers.get('x-request-id');
    const second = (await fetch(`${base}/v2/things/t-1`)).headers.get('x-request-id');
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).not.toBe(first);
  });

  it('keeps credentials out of the access log', async () => {
    const { base, logs } = await start();
    await fetch(`${base}/v2/things/t-1`, { headers: { authorization: 'Bearer very.secret.token' } });
    expect(await logs.line('request')).toMatchObject({ path: '/v2/things/t-1', status: 200 });
    expect(logs.text()).not.toContain('very.secret.token');
  });
});

describe('HTTP metrics', () => {
  it('labels requests by route template and counts errors by status class', async () => {
    const { base, metricsRegistry } = await start();
    await fetch(`${base}/v2/things/t-1`);
    await fetch(`${base}/v2/things/t-2`);
    await fetch(`${base}/v2/things/bad`);
    await fetch(`${base}/v2/nowhere/at/all`);
    await fetch(`${base}/v2/failures/kubernetes`);
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain(
      'policygrant_http_requests_total{method="GET",route="/v2/things/:id",code="200"} 2',
    );
    expect(text).toContain(
      'policygrant_http_requests_total{method="GET",route="/v2/things/:id",code="400"} 1',
    );
    expect(text).toContain('policygrant_http_requests_total{method="GET",route="unmatched",code="404"} 1');
    expect(text).toContain(
      'policygrant_http_request_errors_total{method="GET",route="/v2/things/:id",code_class="4xx"} 1',
    );
    expect(text).toContain(
      'policygrant_http_request_errors_total{method="GET",route="/v2/failures/:kind",code_class="5xx"} 1',
    );
    expect(text).toMatch(
      /policygrant_http_request_duration_seconds_count\{method="GET",route="\/v2\/things\/:id",code_class="2xx"\} 2/,
    );
    expect(text).not.toContain('t-1');
    expect(await metricsRegistry.getSingleMetricAsString('policygrant_http_requests_total')).toContain(
      '/v2/things/:id',
    );
  });
});
