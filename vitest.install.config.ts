import { defineConfig } from 'vitest/config';
import { HOOK_TIMEOUT_MS, PATIENCE_MS, TEST_TIMEOUT_MS } from './test/support/patience.js';

// The install suite: what only the chart installed on a cluster can show (the controller's leader failover by
// deleting its pod, a `helm upgrade` rollout under checks). hack/chart-e2e.sh runs it after the end-to-end suite,
// against the release that E2E_ENV_FILE describes. It is none of vitest.config.ts's projects, which have no
// cluster; `npm test` reaches it through `npm run test:cluster`.
export default defineConfig({
  test: {
    name: 'install',
    include: ['test/install/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['test/install/support/global-setup.ts'],
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: HOOK_TIMEOUT_MS,
    expect: { poll: { timeout: PATIENCE_MS, interval: 100 } },
    fileParallelism: false,
  },
});
