import type { CatalogItem } from '../../src/api/v1alpha1/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { e2e, stackClient } from '../e2e/support/stack-client.js';
import { CI_EXAMPLES_PER_OPERATION, CI_SEED } from './support/fuzzing.js';
import { readableFailures, runSchemathesis, schemathesisBinary } from './support/schemathesis.js';
import { CONTRACT_DOCUMENTS, type ContractStack } from './support/targets.js';

// The published contract against the running services: schemathesis reads each service's GET /docs and
// tests every operation with every contract check, then follows the documents' links (stateful phase).
// CONTRACT_SEED explores other inputs; CONTRACT_EXAMPLES raises the budget per operation (CI keeps it small).
// `npm run contract:explore` runs the same against a stack that is already running.
const SEED = process.env.CONTRACT_SEED ?? CI_SEED;
const EXAMPLES_PER_OPERATION = Number(process.env.CONTRACT_EXAMPLES ?? CI_EXAMPLES_PER_OPERATION);

const client = stackClient(e2e);
/** The stack of the global setup (injected when the tests run, hence a function). */
const runningStack = (): ContractStack => ({
  aclUrl: e2e().aclUrl,
  decisionUrl: e2e().decisionUrl,
  controllerUrl: e2e().controllerUrl,
  token: (sub, options) => client.token(sub, options),
  catalog: async () =>
    (await client.kubectlJson<{ items: CatalogItem[] }>('get', 'catalogitems')).items.map(
      (item) => item.spec,
    ),
});
let binary: string;

beforeAll(async () => {
  binary = await schemathesisBinary();
});

describe('the OpenAPI documents match their servers', () => {
  it.each(Object.values(CONTRACT_DOCUMENTS).map((document) => [document.title, document] as const))(
    '%s',
    async (_title, document) => {
      const outcome = await runSchemathesis(binary, {
        ...(await document.target(runningStack())),
        seed: SEED,
        examplesPerOperation: EXAMPLES_PER_OPERATION,
      });
      expect(outcome.exitCode, readableFailures(outcome)).toBe(0);
      expect(outcome.output).toMatch(/\d+ generated, \d+ passed/);
    },
  );
});
