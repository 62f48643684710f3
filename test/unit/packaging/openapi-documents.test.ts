import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPENAPI_DIR, renderOpenApiFiles } from '../../../hack/generate-openapi.js';

const REGENERATE = 'docs/openapi/ is out of date: run `npm run generate:openapi`';

describe('docs/openapi/', () => {
  it('holds exactly the documents the services serve at GET /docs (no drift)', async () => {
    const generated = await renderOpenApiFiles();
    const committed = readdirSync(OPENAPI_DIR).filter((file) => file.endsWith('.json'));
    expect(committed.sort(), REGENERATE).toEqual(generated.map((file) => file.fileName).sort());
    for (const file of generated) {
      expect(readFileSync(join(OPENAPI_DIR, file.fileName), 'utf8'), REGENERATE).toBe(file.content);
    }
  });

  it('documents the ACL API under its default base path and the check at the service root', async () => {
    const documents = Object.fromEntries(
      (await renderOpenApiFiles()).map((file) => [file.fileName, JSON.parse(file.content)]),
    );
    expect(documents['acl-api.json'].servers).toEqual([{ url: '/v2' }]);
    expect(Object.keys(documents['acl-api.json'].paths)).toContain('/policy');
    expect(documents['decision-service.json'].servers).toEqual([{ url: '/' }]);
    expect(Object.keys(documents['decision-service.json'].paths)).toContain('/v1/check');
  });

  it("documents every service's operational routes, the controller's document being only those", async () => {
    const documents = Object.fromEntries(
      (await renderOpenApiFiles()).map((file) => [file.fileName, JSON.parse(file.content)]),
    );
    const operational = ['/healthz/live', '/healthz/ready', '/metrics', '/docs'];
    expect(documents['acl-api.json'].paths['/metrics'].get.servers).toEqual([{ url: '/' }]);
    for (const name of ['acl-api.json', 'decision-service.json']) {
      expect(Object.keys(documents[name].paths), name).toEqual(expect.arrayContaining(operational));
    }
    expect(documents['controller.json'].servers).toEqual([{ url: '/' }]);
    expect(Object.keys(documents['controller.json'].paths)).toEqual(operational);
  });

  it('links each created resource to the operations that take its id, by operationIds that exist', async () => {
    const acl = JSON.parse(
      (await renderOpenApiFiles()).find((file) => file.fileName === 'acl-api.json')?.content ?? '{}',
    );
    const operations = Object.values(acl.paths).flatMap((item) => Object.values(item as object));
    const operationIds = new Set(operations.map((operation) => operation.operationId));
    const linked = (path: string) =>
      Object.values(acl.paths[path].post.responses['201'].links ?? {}) as { operationId: string }[];
    expect(linked('/policy').map((link) => link.operationId)).toEqual(['deletePolicy']);
    expect(linked('/delegations').map((link) => link.operationId)).toEqual([
      'getDelegation',
      'deleteDelegation',
    ]);
    expect(linked('/access-requests').map((link) => link.operationId)).toEqual([
      'getAccessRequest',
      'decideAccessRequest',
    ]);
    for (const path of ['/policy', '/delegations', '/access-requests']) {
      for (const link of linked(path)) expect(operationIds, link.operationId).toContain(link.operationId);
    }
  });

  it('states the bounds of query integers and the consumer rule of a grant in JSON Schema', async () => {
    const acl = JSON.parse(
      (await renderOpenApiFiles()).find((file) => file.fileName === 'acl-api.json')?.content ?? '{}',
    );
    const limit = acl.paths['/policy/consumer'].get.parameters.find(
      (parameter: { name: string }) => parameter.name === 'limit',
    );
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 50 });
    const item = acl.components.schemas.CreatePolicyRequest.properties.request.items;
    expect(item.allOf).toContainEqual({
      if: { properties: { policyType: { const: 'GROUP' } } },
      then: { not: { required: ['userId'] }, properties: { constraints: { required: ['subjects'] } } },
    });
    expect(acl.components.schemas.MemberSnapshot.properties.userIds.uniqueItems).toBe(true);
  });
});
