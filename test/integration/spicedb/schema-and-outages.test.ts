import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../dev/localplane/free-port.js';
import { startSpiceDB, type SpiceDBServer } from '../../../dev/localplane/spicedb-server.js';
import { resolveToolPaths } from '../../../dev/localplane/tool-paths.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import { GrpcCode, SpiceDBError, SpiceDBUnavailableError } from '../../../src/spicedb/errors.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { sleep } from '../../../dev/wait/sleep.js';
import { controlPlane } from '../support/cluster.js';
import { TcpProxy } from '../../support/tcp-proxy.js';

// A schema is global to a SpiceDB, so these tests start their own instead of changing the shared one.
let stateDir: string;
let spicedb: SpiceDBServer;
let client: SpiceDBClient;

async function startOwnSpiceDB(name: string): Promise<SpiceDBServer> {
  const binary = controlPlane().tools.spicedb ?? (await resolveToolPaths()).spicedb;
  return startSpiceDB({ binary, stateDir, name });
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'spicedb-schema-it-'));
  spicedb = await startOwnSpiceDB('spicedb-schema-test');
  client = new SpiceDBClient({ endpoint: spicedb.endpoint, token: spicedb.token, transport: 'plaintext' });
});

afterAll(async () => {
  client?.close();
  await spicedb?.process.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

/** Evaluates agent#operator, a relation only the changed schema has. */
function checkOperator() {
  return client.checkPermission({
    resource: { type: 'agent', id: 'a' },
    permission: 'operator',
    subject: { type: 'user', id: 'u' },
    consistency: { fullyConsistent: true },
  });
}

const check = {
  resource: { type: 'resource', id: 'r' },
  permission: 'viewer',
  subject: { type: 'user', id: 'u' },
};

describe('ensureSchema on a SpiceDB of its own', () => {
  it('reports a reachable SpiceDB without schema as healthy', async () => {
    expect(await client.health()).toEqual({ schemaWritten: false });
  });

  it('writes the schema once, then leaves it alone until it changes', async () => {
    const schema = readSchemaText();
    expect(await client.ensureSchema(schema)).toEqual({ written: true, zedToken: expect.any(String) });
    expect(await client.ensureSchema(schema)).toEqual({ written: false });
    // Whitespace does not count as a change.
    expect(await client.ensureSchema(`\n\n${schema.replaceAll('\t', '    ')}\n`)).toEqual({ written: false });
    expect(await client.health()).toEqual({ schemaWritten: true });
    expect(await client.readSchema()).toContain('relation api_consumer: user with expiration');

    const changed = schema.replace('definition agent {', 'definition agent {\n\trelation operator: user');
    expect(await client.ensureSchema(changed)).toEqual({ written: true, zedToken: expect.any(String) });
    expect(await client.ensureSchema(changed)).toEqual({ written: false });
    expect((await checkOperator()).allowed).toBe(false);

    expect(await client.ensureSchema(schema)).toEqual({ written: true, zedToken: expect.any(String) });
    expect(await client.ensureSchema(schema)).toEqual({ written: false });
    const refused = await checkOperator().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SpiceDBError);
    expect(refused).not.toBeInstanceOf(SpiceDBUnavailableError);
    expect(String(refused)).toMatch(/operator/);
  });
});

describe('fail closed', () => {
  it('answers SpiceDBUnavailableError, not a timeout, when nothing listens on the port', async () => {
    const unreachable = new SpiceDBClient({
      endpoint: `127.0.0.1:${await freePort()}`,
      token: 'key',
      transport: 'plaintext',
      deadlines: { checkMs: 5_000 },
    });
    try {
      // Refused (UNAVAILABLE, after the retries of a read), not waited out until the deadline (DEADLINE_EXCEEDED).
      for (const call of [() => unreachable.checkPermission(check), () => unreachable.health()]) {
        const error = await call().catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(SpiceDBUnavailableError);
        expect(error).toMatchObject({ code: GrpcCode.UNAVAILABLE });
      }
    } finally {
      unreachable.close();
    }
  });

  it('gives up at the deadline when the server accepts connections but never answers', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const stalled = new SpiceDBClient({
      endpoint: `127.0.0.1:${port}`,
      token: 'key',
      transport: 'plaintext',
      deadlines: { checkMs: 500 },
    });
    try {
      const started = Date.now();
      const error = await stalled.checkPermission(check).catch((caught: unknown) => caught);
      const elapsed = Date.now() - started;
      expect(error).toBeInstanceOf(SpiceDBUnavailableError);
      expect(error).toMatchObject({ code: GrpcCode.DEADLINE_EXCEEDED });
      expect(elapsed).toBeGreaterThanOrEqual(450);
      // Gave up at all: a call without a deadline would wait on the silent server for ever.
      expect(elapsed).toBeLessThan(POLL_TIMEOUT_MS);
    } finally {
      stalled.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('turns a SpiceDB that died into SpiceDBUnavailableError', async () => {
    const dying = await startOwnSpiceDB('spicedb-dying');
    const dyingClient = new SpiceDBClient({
      endpoint: dying.endpoint,
      token: dying.token,
      transport: 'plaintext',
      deadlines: { checkMs: 1_000 },
    });
    try {
      expect(await dyingClient.health()).toEqual({ schemaWritten: false });
      await dying.process.kill();
      await expect(dyingClient.health()).rejects.toBeInstanceOf(SpiceDBUnavailableError);
      await expect(dyingClient.checkPermission(check)).rejects.toBeInstanceOf(SpiceDBUnavailableError);
    } finally {
      dyingClient.close();
      await dying.process.kill();
    }
  });
});

describe('reads lost with their connection', () => {
  it('asks a check again on a fresh connection when its connection is reset before the answer', async () => {
    const proxy = await TcpProxy.start({ target: spicedb.endpoint });
    const proxied = new SpiceDBClient({
      endpoint: proxy.endpoint,
      token: spicedb.token,
      transport: 'plaintext',
    });
    try {
      expect((await proxied.checkPermission(check)).allowed).toBe(false);
      // The check's request is held in the proxy, then its connection reset: no answer ever left SpiceDB.
      proxy.pause('hold');
      const answer = proxied.checkPermission(check);
      // The request written into the held connection (nothing can be observed of it while it is held).
      await sleep(100);
      proxy.cutAll();
      proxy.resume();
      expect((await answer).allowed).toBe(false);
    } finally {
      proxied.close();
      await proxy.close();
    }
  });
});
