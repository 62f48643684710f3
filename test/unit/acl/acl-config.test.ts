import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aclConfigFromEnvironment } from '../../../src/acl/acl-config.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'acl-config-'));
  await writeFile(join(dir, 'kubeconfig'), KUBECONFIG);
  env = {
    KUBECONFIG: join(dir, 'kubeconfig'),
    JWKS_URL: 'https://id.example/jwks',
    JWT_ISSUER: 'https://id.example/',
    JWT_AUDIENCE: 'acl',
    ACL_NAMESPACE: 'grants',
  };
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the ACL API configuration', () => {
  it('needs no SpiceDB setting and holds none', async () => {
    const config = await aclConfigFromEnvironment(env);
    expect(config).toMatchObject({ namespace: 'grants', port: 8080, basePath: '/v2' });
    expect(config).not.toHaveProperty('spicedb');
  });

  it('does not read SpiceDB settings: malformed ones are no error', async () => {
    const config = await aclConfigFromEnvironment({
      ...env,
      SPICEDB_ENDPOINT: 'no port',
      SPICEDB_TLS: 'maybe',
    });
    expect(JSON.stringify({ ...config, metricsRegistry: undefined })).not.toContain('no port');
  });
});
