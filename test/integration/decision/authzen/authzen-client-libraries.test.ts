import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPinnedTools } from '../../../../dev/localplane/tool-paths.js';
import type { Relationship } from '../../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { uniqueId } from '../../support/cluster.js';
import type { DecisionServiceUnderTest } from '../support/decision-service.js';
import { startServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';
import type { ServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';

// AuthZEN client libraries written by others, each driven by a small enforcement point of ours
// (test/integration/decision/authzen/clients/, built into the tools cache by hack/tools/build.sh): they discover
// the endpoints from the metadata (openidauthzen) or take them from configuration (empowernow-sdk, which also
// fetches its bearer token from an OAuth token endpoint, served here), then evaluate, batch and search against
// the real decision service and SpiceDB, sending what they send by default (their own X-Request-ID, empty
// `properties`, context members set to null, options of their own) and the properties and context an enforcement
// point passes along.
const PUBLIC_URL = 'https://pdp.example.com';
let own: ServiceOnOwnSpiceDB;
let service: DecisionServiceUnderTest;
let tools: Record<string, string>;
let tokenEndpoint: Server;
const run = uniqueId('clients');
const ALICE = `alice-${run}`;
const ITEM = `urn:dx:item:${run}`;
const OTHER_ITEM = `urn:dx:item:${run}-other`;

beforeAll(async () => {
  [own, tools] = await Promise.all([
    startServiceOnOwnSpiceDB('authzen-clients', { publicUrl: PUBLIC_URL }),
    buildPinnedTools(),
  ]);
  ({ service } = own);
  tokenEndpoint = await serveTokenEndpoint(service.authorization.replace(/^Bearer /, ''));
  const grant: Relationship = {
    resource: { type: 'resource', id: encodeObjectId(ITEM) },
    relation: 'api_consumer',
    subject: { type: 'user', id: encodeObjectId(ALICE) },
    expiresAt: new Date(Date.now() + 3_600_000),
  };
  await service.afterWatchDelivers(() =>
    own.spicedb.client.writeRelationships([{ operation: 'touch', relationship: grant }]),
  );
});

afterAll(async () => {
  tokenEndpoint?.close();
  await own?.stop();
});

/** An OAuth token endpoint that grants `token` to any client credentials. */
async function serveTokenEndpoint(token: string): Promise<Server> {
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3_600 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

interface CallAnswer {
  call: string;
  response?: Record<string, unknown>;
  error?: string;
  /** Only where the library shows the answer's headers. */
  request_id_echoed?: boolean;
}

/** Runs `program` with the calls on its stdin; its stdout is one JSON array of answers. */
function runEnforcementPoint(program: string, calls: unknown[]): Promise<CallAnswer[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, [], {
      env: {
        ...process.env,
        AUTHZEN_PDP: PUBLIC_URL,
        AUTHZEN_ORIGIN: service.url,
        AUTHZEN_TOKEN: service.authorization.replace(/^Bearer /, ''),
        AUTHZEN_TOKEN_URL: `http://127.0.0.1:${(tokenEndpoint.address() as AddressInfo).port}/token`,
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(output) as CallAnswer[])
        : reject(new Error(`${program} exited ${code}`)),
    );
    child.stdin.end(JSON.stringify(calls));
  });
}

/** What an enforcement point in front of an HTTP API passes along: who asks, from where, for what. */
const alice = { type: 'user', id: ALICE, properties: { ip_address: '172.217.22.14', department: 'Sales' } };
const read = { name: 'api', properties: { method: 'GET', path: '/items/42' } };
const context = { time: '2026-11-29T06:00:00Z', user_agent: 'curl/8.5.0' };
const item = (id: string) => ({ type: 'resource', id, properties: { owner_hint: 'none' } });

const CALLS = [
  { call: 'evaluate', request: { subject: alice, action: read, resource: item(ITEM), context } },
  { call: 'evaluate', request: { subject: alice, action: read, resource: item(OTHER_ITEM), context } },
  {
    call: 'evaluate_batch',
    request: {
      subject: alice,
      action: read,
      context,
      options: { evaluations_semantic: 'execute_all', trace: true },
      evaluations: [
        { resource: item(ITEM) },
        { resource: item(OTHER_ITEM) },
        { resource: item(ITEM), action: { name: 'fly' } },
      ],
    },
  },
  {
    call: 'search_subjects',
    request: { subject: { type: 'user' }, action: read, resource: item(ITEM), context, page: { limit: 10 } },
  },
  {
    call: 'search_resources',
    request: { subject: alice, action: read, resource: { type: 'resource' }, context },
  },
  { call: 'search_actions', request: { subject: alice, resource: item(ITEM), context } },
];

describe.each([
  {
    library: 'openidauthzen 0.1.0-alpha.1 (crates.io, Rust)',
    binary: 'OPENIDAUTHZEN_PEP_BIN',
    seesHeaders: true,
  },
  { library: 'empowernow-sdk 3.23.3 (PyPI, Python)', binary: 'EMPOWERNOW_PEP_BIN', seesHeaders: false },
])('$library', ({ binary, seesHeaders }) => {
  it('evaluates, batches and searches as it sends by default, each answer carrying its request id', async () => {
    const answers = await runEnforcementPoint(tools[binary] ?? '', CALLS);
    expect(answers.filter((answer) => answer.error !== undefined)).toEqual([]);
    expect(answers.map((answer) => answer.call)).toEqual(CALLS.map((call) => call.call));
    const [allowed, denied, batch, subjects, resources, actions] = answers.map((answer) => answer.response);
    expect(allowed).toEqual({ decision: true });
    expect(denied).toEqual({ decision: false });
    expect(batch?.evaluations).toEqual([
      { decision: true },
      { decision: false },
      {
        decision: false,
        context: { error: { status: 400, message: expect.stringContaining('action.name') } },
      },
    ]);
    expect(subjects?.results).toEqual([{ type: 'user', id: ALICE }]);
    expect(resources?.results).toEqual([{ type: 'resource', id: ITEM }]);
    expect(actions?.results).toEqual(expect.arrayContaining([{ name: 'api' }]));
    if (seesHeaders) expect(answers.map((answer) => answer.request_id_echoed)).toEqual(CALLS.map(() => true));
  });
});
