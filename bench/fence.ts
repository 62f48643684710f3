// npx tsx bench/fence.ts [-- --writes 2000 --rounds 3]
//
// The cost of the controller's fence: a WriteRelationships of one grant tuple with and without the
// precondition that the fence relationship names the writer's term (src/controller/fenced-spicedb.ts). One
// SpiceDB of its own (memory datastore, loopback), writes one after another, alternating rounds so that the
// machine's load falls on both alike.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FENCE_OBJECT_TYPE, FENCE_RELATION, TERM_OBJECT_TYPE } from '../src/controller/fenced-spicedb.js';
import { startSpiceDB } from '../dev/localplane/spicedb-server.js';
import { resolveToolPaths } from '../dev/localplane/tool-paths.js';
import { SpiceDBClient, type Precondition, type Relationship } from '../src/spicedb/client.js';
import { readSchemaText } from '../src/spicedb/schema.js';

const { values } = parseArgs({
  options: { writes: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } },
});
const writes = Number(values.writes);
const rounds = Number(values.rounds);

const fence: Relationship = {
  resource: { type: FENCE_OBJECT_TYPE, id: 'bench' },
  relation: FENCE_RELATION,
  subject: { type: TERM_OBJECT_TYPE, id: 'term-1' },
};
const fenced: Precondition[] = [
  {
    operation: 'mustMatch',
    filter: {
      resourceType: FENCE_OBJECT_TYPE,
      resourceId: 'bench',
      relation: FENCE_RELATION,
      subject: { type: TERM_OBJECT_TYPE, id: 'term-1', relation: '' },
    },
  },
];

function tuple(index: number): Relationship {
  return {
    resource: { type: 'resource', id: `item-${index % 100}` },
    relation: 'api_consumer',
    subject: { type: 'user', id: `user-${index}` },
    expiresAt: new Date('2099-01-01T00:00:00Z'),
  };
}

/** Microseconds per write, median of the round's writes. */
async function round(client: SpiceDBClient, preconditions: Precondition[]): Promise<number> {
  const samples: number[] = [];
  for (let index = 0; index < writes; index++) {
    const started = performance.now();
    await client.writeRelationships([{ operation: 'touch', relationship: tuple(index) }], { preconditions });
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return (samples[Math.floor(samples.length / 2)] ?? 0) * 1000;
}

const stateDir = await mkdtemp(join(tmpdir(), 'bench-fence-'));
const server = await startSpiceDB({ binary: (await resolveToolPaths()).spicedb, stateDir, name: 'spicedb' });
const client = new SpiceDBClient({ endpoint: server.endpoint, token: server.token, transport: 'plaintext' });
try {
  await client.ensureSchema(readSchemaText());
  await client.writeRelationships([{ operation: 'touch', relationship: fence }]);
  await round(client, fenced); // warm-up
  const plain: number[] = [];
  const withFence: number[] = [];
  for (let index = 0; index < rounds; index++) {
    plain.push(await round(client, []));
    withFence.push(await round(client, fenced));
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;
  const [a, b] = [median(plain), median(withFence)];
  process.stdout.write(
    `WriteRelationships, 1 tuple, median of ${rounds} rounds × ${writes} writes:\n` +
      `  without precondition ${a.toFixed(0)} µs, with the fence ${b.toFixed(0)} µs (+${(b - a).toFixed(0)} µs, ${(((b - a) / a) * 100).toFixed(1)} %)\n`,
  );
} finally {
  client.close();
  await server.process.stop();
  await rm(stateDir, { recursive: true, force: true });
}
