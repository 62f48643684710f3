import { defineConfig } from 'vitest/config';
import { HOOK_TIMEOUT_MS, PATIENCE_MS, TEST_TIMEOUT_MS } from './test/support/patience.js';

// Polls of another process (expect.poll) wait as long as the shared until() does: see test/support/patience.ts.
const patientPolls = { poll: { timeout: PATIENCE_MS, interval: 100 } };

// Three projects: unit tests of pure logic, integration tests that share one real control plane (etcd,
// kube-apiserver, SpiceDB) started once per run by the global setup, and the end-to-end suite that drives the
// development stack from outside.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/support/global-setup.ts'],
          testTimeout: TEST_TIMEOUT_MS,
          hookTimeout: HOOK_TIMEOUT_MS,
          expect: patientPolls,
          // Two cores: files share the control plane, so run a few at once, not one per core of a CI box.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/e2e/support/global-setup.ts'],
          testTimeout: TEST_TIMEOUT_MS,
          hookTimeout: HOOK_TIMEOUT_MS,
          expect: patientPolls,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
