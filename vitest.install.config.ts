import { defineConfig } from 'vitest/config';
import { POLL_TIMEOUT_MS } from './dev/wait/until.js';
import { HOOK_TIMEOUT_MS, TEST_TIMEOUT_MS } from './test/support/timeouts.js';

// The install suite: what only the chart installed on a cluster can show. hack/chart-e2e.sh runs it against the
// release that E2E_ENV_FILE describes, the files INSTALL_SHAPE names: `bundled` (test/install/*.test.ts: the
// controller's leader failover by deleting its pod, a `helm upgrade` rollout under checks), and on the production
// topology `upgrade` (test/install/upgrade: the previous release upgraded with data under checks), then
// `production` (test/install/production: freshness through every decision replica, faults, disaster recovery).
// It is none of vitest.config.ts's projects, which have no cluster; `npm test` reaches it through
// `npm run test:cluster`.
const files: Record<string, string> = {
  bundled: 'test/install/*.test.ts',
  upgrade: 'test/install/upgrade/*.test.ts',
  production: 'test/install/production/*.test.ts',
};
const shape = process.env.INSTALL_SHAPE ?? 'bundled';
if (!files[shape]) throw new Error(`INSTALL_SHAPE must be one of ${Object.keys(files).join(', ')}`);

export default defineConfig({
  test: {
    name: 'install',
    include: [files[shape] as string],
    environment: 'node',
    globalSetup: ['test/install/support/global-setup.ts'],
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: HOOK_TIMEOUT_MS,
    expect: { poll: { timeout: POLL_TIMEOUT_MS, interval: 100 } },
    fileParallelism: false,
  },
});
