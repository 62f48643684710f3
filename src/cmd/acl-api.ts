import { aclConfigFromEnvironment } from '../acl/acl-config.js';
import { startAclApi } from '../acl/acl-server.js';
import { runIfEntrypoint, serve } from './process-lifecycle.js';

// The ACL API: `node dist/cmd/acl-api.js` (or `main.js acl-api`), configured by environment variables
// (docs/acl-api.md).
export function main(): Promise<void> {
  return serve({
    name: 'acl-api',
    configFromEnvironment: aclConfigFromEnvironment,
    start: (config) => startAclApi(config),
  });
}

runIfEntrypoint(import.meta.url, 'acl-api', main);
