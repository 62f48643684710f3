import { defineConfig } from 'vitest/config';
import { POLL_TIMEOUT_MS } from './dev/wait/until.js';
import { HOOK_TIMEOUT_MS, TEST_TIMEOUT_MS } from './test/support/timeouts.js';

/** A coverage threshold: the least percentage of statements, branches, functions and lines. */
const floor = (statements: number, branches: number, functions: number, lines: number) => ({
  statements,
  branches,
  functions,
  lines,
});

// Polls of another process (expect.poll) wait as long as the shared until() does (dev/wait/until.ts).
const pollDefaults = { poll: { timeout: POLL_TIMEOUT_MS, interval: 100 } };

// Six projects: unit tests of pure logic, integration tests that share one real control plane (etcd,
// kube-apiserver, SpiceDB) started once per run by the global setup, a few of them again with SpiceDB on
// PostgreSQL, the end-to-end suite that drives the development stack from outside, the contract test (schemathesis
// against a stack of its own), and the controller chaos
// test, last and alone. Coverage (npm test) is measured over all six.
export default defineConfig({
  test: {
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts', 'dev/**/*.ts'],
      // The table per file goes to coverage/coverage.txt, so the end of the log is the failed tests' list (when
      // any) and the summary, where a reader of the CI log looks; coverage/coverage-summary.json too.
      reporter: [['text', { file: 'coverage.txt' }], 'text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      // A failing test still prints the coverage it measured.
      reportOnFailure: true,
      // Per folder of src/, a floor for statements, branches, functions and lines: the level measured when it
      // was set, rounded down, less two points (other work was landing meanwhile). Coverage may rise, never drop
      // under it: raise a folder's floor as its coverage rises. cmd/ and dev/stack/ run mostly in the e2e
      // project's child processes, which coverage does not see. The first line is the floor of src/ as a whole.
      thresholds: {
        ...floor(89, 80, 92, 90),
        'src/acl/**': floor(89, 73, 92, 91),
        'src/api/**': floor(98, 93, 98, 98),
        'src/audit/**': floor(85, 86, 78, 87),
        'src/auth/**': floor(94, 90, 93, 96),
        'src/cmd/**': floor(28, 33, 17, 30),
        'src/config/**': floor(95, 75, 98, 98),
        'src/controller/**': floor(93, 84, 97, 95),
        'src/decision/**': floor(94, 81, 98, 95),
        'dev/stack/**': floor(28, 33, 35, 27),
        'src/http/**': floor(95, 88, 98, 96),
        'dev/localplane/**': floor(76, 56, 80, 77),
        'src/observability/**': floor(98, 98, 98, 98),
        'src/runtime/**': floor(93, 84, 95, 93),
        'src/spicedb/**': floor(95, 86, 98, 95),
        'src/verdict/**': floor(96, 87, 95, 97),
      },
    },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // A guard against a hang, not a bound on speed: some units run on real time (a manager's leases, the
          // OpenAPI documents generated), and vitest's 5 s default is too close for them on a loaded machine.
          testTimeout: 30_000,
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
          expect: pollDefaults,
          // Two cores: files share the control plane, so run a few at once, not one per core of a CI box.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          // The same tests on SpiceDB's PostgreSQL datastore, production's: a few files that cover the
          // controller (grant lifecycle, drift resync) and the decision service (check, revision barrier: the
          // Watch on PostgreSQL), on a control plane of its own whose SpiceDBs keep their data in PostgreSQL.
          name: 'integration-postgres',
          include: [
            'test/integration/controller/grant-lifecycle.test.ts',
            'test/integration/controller/drift-resync.test.ts',
            'test/integration/decision/check.test.ts',
            'test/integration/decision/revision-barrier.test.ts',
            'test/integration/decision/read-only-spicedb.test.ts',
            'test/integration/decision/replica-freshness.test.ts',
          ],
          environment: 'node',
          globalSetup: ['test/integration/support/global-setup-postgres.ts'],
          testTimeout: TEST_TIMEOUT_MS,
          hookTimeout: HOOK_TIMEOUT_MS,
          expect: pollDefaults,
          maxWorkers: 2,
          sequence: { groupOrder: 2 },
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
          expect: pollDefaults,
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
        },
      },
      {
        test: {
          // schemathesis against the three services of a development stack of its own (started as the e2e
          // suite starts one): the OpenAPI documents match what the servers do (test/contract/).
          name: 'contract',
          include: ['test/contract/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/contract/support/global-setup.ts'],
          // A fuzzing run of the ACL API takes minutes on two loaded cores; the budget only catches a hang.
          testTimeout: 1_800_000,
          hookTimeout: HOOK_TIMEOUT_MS,
          maxWorkers: 1,
          sequence: { groupOrder: 4 },
        },
      },
      {
        test: {
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          environment: 'node',
          // A control plane of its own, started like the integration tests'; it runs last and alone.
          globalSetup: ['test/integration/support/global-setup.ts'],
          testTimeout: 600_000,
          hookTimeout: 300_000,
          maxWorkers: 1,
          sequence: { groupOrder: 5 },
        },
      },
    ],
  },
});
