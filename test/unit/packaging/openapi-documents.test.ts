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
});
