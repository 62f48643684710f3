import { join } from 'node:path';
import { freePort } from '../../dev/localplane/free-port.js';
import { startHealthyProcess, type ManagedProcess } from '../../dev/localplane/managed-process.js';
import { buildPinnedTools } from '../../dev/localplane/tool-paths.js';
import type {
  CheckPermissionInput,
  Relationship,
  RelationshipUpdate,
  SubjectRef,
} from '../../src/spicedb/client.js';

// OpenFGA, the peer of `npm run bench:check`: one Go process answering checks from its own store. It gets the
// part of src/spicedb/schema.zed that the benchmark's checks reach, and the same relationships as tuples.

/** Where the load client finds the peer's store: plain data, so that it crosses into the load worker. */
export interface OpenFGAStore {
  url: string;
  storeId: string;
  modelId: string;
}

export interface OpenFGAPeer {
  process: ManagedProcess;
  store: OpenFGAStore;
}

/** Types a directly assigned relation accepts: a type, or a type's relation (a userset). */
type UserTypes = Array<{ type: string; relation?: string }>;

const USER: UserTypes = [{ type: 'user' }];
const CONSUMERS: UserTypes = [...USER, { type: 'organization', relation: 'member' }];
const HOLDERS: UserTypes = [...CONSUMERS, { type: 'group', relation: 'member' }];

/** A type whose relations are all directly assigned. */
function directType(type: string, relations: Record<string, UserTypes>) {
  return {
    type,
    relations: Object.fromEntries(Object.keys(relations).map((relation) => [relation, { this: {} }])),
    metadata: {
      relations: Object.fromEntries(
        Object.entries(relations).map(([relation, types]) => [
          relation,
          { directly_related_user_types: types },
        ]),
      ),
    },
  };
}

/**
 * schema.zed's user, organization, group and resource as far as the benchmark's checks reach them (the consumers
 * of the three access types, editor, direct_viewer and viewer), in OpenFGA's JSON (schema 1.1). In OpenFGA's DSL:
 *
 *   type resource
 *     relations
 *       define api_consumer: [user, organization#member]      (file_consumer, sub_consumer alike)
 *       define editor: [user, organization#member, group#member]
 *       define direct_viewer: [user, organization#member, group#member]
 *       define viewer: direct_viewer or editor
 *
 * SpiceDB's consumers carry an expiration; the benchmark's grants expire a day after it starts, which within
 * its run is the same as never, so the model has no condition and the tuples no expiry.
 */
export function openfgaModel() {
  const resource = directType('resource', {
    api_consumer: CONSUMERS,
    file_consumer: CONSUMERS,
    sub_consumer: CONSUMERS,
    editor: HOLDERS,
    direct_viewer: HOLDERS,
  });
  const viewer = {
    union: {
      child: [
        { computedUserset: { relation: 'direct_viewer' } },
        { computedUserset: { relation: 'editor' } },
      ],
    },
  };
  return {
    schema_version: '1.1',
    type_definitions: [
      { type: 'user' },
      directType('organization', { member: USER }),
      directType('group', { member: USER }),
      {
        type: 'resource',
        relations: { ...resource.relations, viewer },
        metadata: {
          relations: { ...resource.metadata.relations, viewer: { directly_related_user_types: [] } },
        },
      },
    ],
  };
}

interface TupleKey {
  user: string;
  relation: string;
  object: string;
}

function userOf(subject: SubjectRef): string {
  return `${subject.type}:${subject.id}${subject.relation ? `#${subject.relation}` : ''}`;
}

/** A relationship as OpenFGA's tuple key (SpiceDB's encoded ids hold none of the `:`, `#` and spaces it refuses). */
export function tupleKeyOf({ resource, relation, subject }: Relationship): TupleKey {
  return { user: userOf(subject), relation, object: `${resource.type}:${resource.id}` };
}

export function checkPath(store: OpenFGAStore): string {
  return `/stores/${store.storeId}/check`;
}

export function writePath(store: OpenFGAStore): string {
  return `/stores/${store.storeId}/write`;
}

/**
 * The body of a check, at MINIMIZE_LATENCY like the direct path's and the service's SpiceDB checks. With
 * OpenFGA's defaults (its check cache off) either consistency reads the store on every check.
 */
export function checkBody(store: OpenFGAStore, query: CheckPermissionInput): Buffer {
  const { resource, permission, subject } = query;
  const tuple_key = tupleKeyOf({ resource, relation: permission, subject });
  return Buffer.from(
    JSON.stringify({ tuple_key, authorization_model_id: store.modelId, consistency: 'MINIMIZE_LATENCY' }),
  );
}

/** The answer of a check: only `allowed: true` allows. */
export function allowedInAnswer(answer: Buffer): boolean {
  return (JSON.parse(answer.toString()) as { allowed?: boolean }).allowed === true;
}

/**
 * The body of a write of `updates` (at most OpenFGA's limit of tuples per write), with SpiceDB's semantics: a touch
 * of a tuple that is there and a delete of one that is not succeed.
 */
export function writeBody(store: OpenFGAStore, updates: RelationshipUpdate[]): Buffer {
  const keys = (operation: RelationshipUpdate['operation']) =>
    updates
      .filter((update) => update.operation === operation)
      .map((update) => tupleKeyOf(update.relationship));
  const [touched, deleted] = [keys('touch'), keys('delete')];
  return Buffer.from(
    JSON.stringify({
      authorization_model_id: store.modelId,
      ...(touched.length > 0 ? { writes: { tuple_keys: touched, on_duplicate: 'ignore' } } : {}),
      ...(deleted.length > 0 ? { deletes: { tuple_keys: deleted, on_missing: 'ignore' } } : {}),
    }),
  );
}

/** OpenFGA's default `--max-tuples-per-write`: the most tuples one Write call takes. */
export const MAX_TUPLES_PER_WRITE = 100;

/** Writes `updates` in calls of at most MAX_TUPLES_PER_WRITE, one after the other. */
export async function writeTuples(store: OpenFGAStore, updates: RelationshipUpdate[]): Promise<void> {
  for (let start = 0; start < updates.length; start += MAX_TUPLES_PER_WRITE) {
    const body = writeBody(store, updates.slice(start, start + MAX_TUPLES_PER_WRITE));
    await postJson(`${store.url}${writePath(store)}`, body);
  }
}

async function postJson(url: string, body: Buffer | string): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const answer = await response.text();
  if (!response.ok) throw new Error(`OpenFGA POST ${url}: ${response.status} ${answer}`);
  return JSON.parse(answer) as unknown;
}

/** The pinned OpenFGA: OPENFGA_BIN, or built into the tool cache (a no-op once it is there). */
async function openfgaBinary(): Promise<string> {
  const binary = process.env.OPENFGA_BIN ?? (await buildPinnedTools(['openfga'])).OPENFGA_BIN;
  if (!binary) throw new Error('hack/tools/env.sh openfga did not export OPENFGA_BIN');
  return binary;
}

const START_TIMEOUT_MS = 30_000;

/**
 * `openfga run` on the memory datastore, HTTP and gRPC (which its HTTP gateway calls) on loopback ports of its
 * own, the playground, metrics and tracing off, logging warnings into `stateDir`; then a store with the model.
 * The caller stops the process, also when this fails after it started.
 */
export async function startOpenFGA(stateDir: string): Promise<OpenFGAPeer> {
  const [binary, httpPort, grpcPort] = await Promise.all([openfgaBinary(), freePort(), freePort()]);
  const url = `http://127.0.0.1:${httpPort}`;
  const healthy = async () => (await fetch(`${url}/healthz`)).ok;
  const server = await startHealthyProcess(
    {
      name: 'openfga-bench',
      command: binary,
      args: [
        'run',
        '--datastore-engine=memory',
        `--http-addr=127.0.0.1:${httpPort}`,
        `--grpc-addr=127.0.0.1:${grpcPort}`,
        '--playground-enabled=false',
        '--metrics-enabled=false',
        '--trace-enabled=false',
        '--log-level=warn',
      ],
      logFile: join(stateDir, 'openfga-bench.log'),
    },
    healthy,
    START_TIMEOUT_MS,
  );
  try {
    const { id: storeId } = (await postJson(`${url}/stores`, JSON.stringify({ name: 'bench' }))) as {
      id: string;
    };
    const model = (await postJson(
      `${url}/stores/${storeId}/authorization-models`,
      JSON.stringify(openfgaModel()),
    )) as { authorization_model_id: string };
    return { process: server, store: { url, storeId, modelId: model.authorization_model_id } };
  } catch (error) {
    await server.stop();
    throw error;
  }
}
