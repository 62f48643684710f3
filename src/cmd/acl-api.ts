import { aclConfigFromEnvironment } from '../acl/acl-config.js';
import { startAclApi } from '../acl/acl-server.js';
import { runIfEntrypoint, stopOnSignals } from './process-lifecycle.js';

// The ACL API: `node dist/cmd/acl-api.js` (or `main.js acl-api`), configured by environment variables
// (docs/acl-api.md). The all-in-one development stack imports startAclApi.
export { startAclApi, aclConfigFromEnvironment };
export type { RunningAclApi, StartOptions } from '../acl/acl-server.js';
export type { AclApiConfig } from '../acl/acl-config.js';

export async function main(): Promise<void> {
  const api = await startAclApi(await aclConfigFromEnvironment());
  stopOnSignals('acl-api', () => api.stop());
}

runIfEntrypoint(import.meta.url, 'acl-api', main);
