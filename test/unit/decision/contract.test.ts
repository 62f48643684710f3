import { describe, expect, it } from 'vitest';
import { compareRoutes } from '../../../src/http/openapi/route-contract.js';
import { decisionUnderTest } from './support/decision-app.js';

type Operation = {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
};

describe('the decision service serves what /docs documents', () => {
  it('serves exactly the documented routes, the operational ones included, each with an operationId', async () => {
    const { app, document } = await decisionUnderTest();
    const comparison = compareRoutes(app, document);
    expect(comparison.served.map((route) => `${route.method} ${route.path}`).sort()).toEqual([
      'GET /.well-known/authzen-configuration',
      'GET /docs',
      'GET /healthz/live',
      'GET /healthz/ready',
      'GET /metrics',
      'GET /watch/passed',
      'POST /access/v1/evaluation',
      'POST /access/v1/evaluations',
      'POST /access/v1/search/action',
      'POST /access/v1/search/resource',
      'POST /access/v1/search/subject',
      'POST /v1/check',
    ]);
    expect(comparison.undocumented).toEqual([]);
    expect(comparison.unserved).toEqual([]);
    for (const item of Object.values(document.paths ?? {})) {
      for (const operation of Object.values(item as Record<string, Operation>)) {
        expect(operation.operationId).toMatch(/^[a-z][A-Za-z]+$/);
      }
    }
  });

  it('describes the check: JSON body, bearer authentication, every error answer denying', async () => {
    const { document } = await decisionUnderTest();
    const check = (document.paths?.['/v1/check'] as Record<string, Operation>).post as Operation;
    expect(check.operationId).toBe('check');
    expect(check.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(check.requestBody?.content ?? {})).toEqual(['application/json']);
    expect(Object.keys(check.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    const errorSchemas = Object.entries(check.responses)
      .filter(([status]) => status !== '200')
      .map(([, response]) => response.content?.['application/json']?.schema);
    expect(new Set(errorSchemas.map((schema) => JSON.stringify(schema)))).toEqual(
      new Set([JSON.stringify({ $ref: '#/components/schemas/DeniedProblem' })]),
    );
    const schemas = document.components?.schemas as Record<string, { properties?: Record<string, unknown> }>;
    expect(Object.keys(schemas.CheckRequest?.properties ?? {}).sort()).toEqual([
      'consistency_token',
      'organisation_id',
      'relation',
      'resource_id',
      'resource_type',
      'subject_id',
      'subject_type',
    ]);
  });

  it('serves the document at /docs', async () => {
    const { url, document } = await decisionUnderTest();
    const response = await fetch(`${url}/docs`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(document)));
  });
});
