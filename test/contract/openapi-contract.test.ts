import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DECISION_CLIENT_ROLE } from '../../src/decision/check-callers.js';
import { e2e, stackClient } from '../e2e/support/stack-client.js';
import {
  readableFailures,
  runSchemathesis,
  schemathesisBinary,
  type ContractRun,
} from './support/schemathesis.js';

// The published contract against the running services: schemathesis reads each service's GET /docs and
// tests every operation with every contract check, then follows the documents' links (stateful phase).
// CONTRACT_SEED explores other inputs; CONTRACT_EXAMPLES raises the budget per operation (CI keeps it small).
const SEED = process.env.CONTRACT_SEED ?? '20261127';
const EXAMPLES_PER_OPERATION = Number(process.env.CONTRACT_EXAMPLES ?? '20');

const stack = stackClient(e2e);
let binary: string;

beforeAll(async () => {
  binary = await schemathesisBinary();
});

// Spelt as schemathesis's ignored_auth check looks for it, so that the check can leave it out.
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** The service root's GET /docs (the ACL URL carries the base path; the document lives at the root). */
const documentOf = (serviceUrl: string) => new URL('/docs', serviceUrl).href;

const targets: [string, () => Promise<Pick<ContractRun, 'documentUrl' | 'headers'>>][] = [
  [
    'the ACL API, as a cos_admin who is also an org_admin',
    async () => ({
      documentUrl: documentOf(e2e().aclUrl),
      headers: bearer(
        await stack.token(randomUUID(), { roles: ['cos_admin', 'org_admin'], org: randomUUID() }),
      ),
    }),
  ],
  [
    'the decision service, as an enforcement point',
    async () => ({
      documentUrl: documentOf(e2e().decisionUrl),
      headers: bearer(await stack.token(randomUUID(), { roles: [DECISION_CLIENT_ROLE] })),
    }),
  ],
  [
    'the controller (operational routes)',
    async () => ({ documentUrl: documentOf(e2e().controllerUrl), headers: {} }),
  ],
];

describe('the OpenAPI documents match their servers', () => {
  it.each(targets)('%s', async (_name, target) => {
    const outcome = await runSchemathesis(binary, {
      ...(await target()),
      seed: SEED,
      examplesPerOperation: EXAMPLES_PER_OPERATION,
    });
    expect(outcome.exitCode, readableFailures(outcome)).toBe(0);
    expect(outcome.output).toMatch(/\d+ generated, \d+ passed/);
  });
});
