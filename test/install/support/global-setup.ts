import type { TestProject } from 'vitest/node';
import { stackSetup } from '../../e2e/support/global-setup.js';

/** The end-to-end suite's setup, on an installed release only: there is no development stack to fall back to. */
export default async function setup(project: TestProject) {
  if (!process.env.E2E_ENV_FILE) {
    throw new Error(
      'the install suite needs an installed release: E2E_ENV_FILE (hack/chart-e2e.sh writes it)',
    );
  }
  return stackSetup()(project);
}
