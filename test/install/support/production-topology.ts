import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { parseStateFile } from '../../../dev/stack/state-file.js';
import type { CatalogItem } from '../../../src/api/v1alpha1/index.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import { tupleKey } from '../../../src/verdict/tuple-key.js';
import { percentile } from '../../../bench/support/statistics.js';
import { acl, kubectl, kubectlJson, userCheckRequest } from '../../e2e/support/stack-client.js';
import { release } from './release.js';

/** Where hack/chart-e2e.sh put the production topology's PostgreSQL and SpiceDB. */
export function topology() {
  const required = (name: string) => {
    const value = process.env[name];
    if (!value)
      throw new Error(`${name} is not set: the production install suite runs from hack/chart-e2e.sh`);
    return value;
  };
  return { db: required('INSTALL_DB_NAMESPACE'), spicedb: required('INSTALL_SPICEDB_NAMESPACE') };
}

interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

/** A decision service replica, reached at its pod's own address (the node's network reaches pod addresses). */
export interface Replica {
  pod: string;
  url: string;
}

const isReady = (pod: Pod) =>
  pod.metadata.deletionTimestamp === undefined &&
  pod.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ===
    true;

/** The pods of a component of the release (or of `selector` in `namespace`) that are Ready. */
export async function readyPods(selector: string, namespace = release().namespace): Promise<Pod[]> {
  const pods = await kubectlJson<{ items: Pod[] }>('get', 'pods', '-n', namespace, '-l', selector);
  return pods.items.filter(isReady);
}

export const DECISION_SELECTOR = 'app.kubernetes.io/component=decision-service';

export async function decisionReplicas(): Promise<Replica[]> {
  return (await readyPods(DECISION_SELECTOR)).map((pod) => ({
    pod: pod.metadata.name,
    url: `http://${pod.status?.podIP}:8081`,
  }));
}

/** The replica's decision on the user's api access to the item, without a consistency token; undefined: no 200. */
export async function replicaAllows(
  replica: Replica,
  checker: string,
  userId: string,
  itemId: string,
): Promise<boolean | undefined> {
  try {
    const response = await fetch(`${replica.url}/v1/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${checker}`, 'content-type': 'application/json' },
      body: JSON.stringify(userCheckRequest(userId, itemId)),
    });
    if (response.status !== 200) return undefined;
    return ((await response.json()) as { result: { allowed: boolean } }).result.allowed;
  } catch {
    return undefined;
  }
}

/** The decision of every replica at once. */
export const everyReplica = (replicas: Replica[], checker: string, userId: string, itemId: string) =>
  Promise.all(replicas.map((replica) => replicaAllows(replica, checker, userId, itemId)));

export interface PolicyReport {
  policyId: string;
  enforced?: boolean;
  /** With `Prefer: wait`: the decision replicas the ACL API found Ready, and how many confirmed the change. */
  decisionReplicas?: { ready: number; passed: number };
}

/** `Prefer: wait=30` when acknowledged, the ACL API's header for "answer once enforced". */
const waitFor = (acknowledged: boolean) => (acknowledged ? { prefer: 'wait=30' } : undefined);

/** Grants the user api access to the item; with `acknowledged`, answers once the controller enforces it. */
export async function grant(
  owner: string,
  item: CatalogItem['spec'],
  userId: string,
  acknowledged: boolean,
): Promise<PolicyReport> {
  const reply = await acl<{ results: PolicyReport[] }>('/policy', {
    method: 'POST',
    token: owner,
    headers: waitFor(acknowledged),
    body: {
      request: [
        {
          policyType: 'INDIVIDUAL',
          itemId: item.itemId,
          itemType: item.itemType,
          userId,
          expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
          constraints: { access: [{ accessType: 'api' }] },
        },
      ],
    },
  });
  if (reply.status !== 201) throw new Error(`POST /policy answered ${reply.status}`);
  return reply.body.results[0] as PolicyReport;
}

/** Revokes the grant; with `acknowledged`, answers once the controller has withdrawn it. */
export async function revoke(owner: string, policyId: string, acknowledged: boolean): Promise<PolicyReport> {
  const reply = await acl<{ results?: PolicyReport[] }>(`/policy?id=${policyId}`, {
    method: 'DELETE',
    token: owner,
    headers: waitFor(acknowledged),
  });
  if (reply.status !== 200) throw new Error(`DELETE /policy answered ${reply.status}`);
  return reply.body.results?.[0] ?? { policyId };
}

/** p50 and p99 (nearest rank) of the samples, in whole ms. */
export function p50p99(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${Math.round(percentile(sorted, 50))} ms, p99 ${Math.round(percentile(sorted, 99))} ms`;
}

/** The SpiceDB the decision service reads (the read-only one), as E2E_ENV_FILE names its port-forward. */
export async function readOnlySpiceDB(): Promise<SpiceDBClient> {
  const env = parseStateFile(await readFile(process.env.E2E_ENV_FILE as string, 'utf8'));
  return new SpiceDBClient({
    endpoint: env.SPICEDB_ENDPOINT as string,
    token: env.SPICEDB_TOKEN as string,
    transport: 'plaintext',
    deadlines: { readMs: 120_000 },
  });
}

/** Every relationship of every definition of the project's schema, as tuple keys with their expiration. */
export async function allRelationships(spicedb: SpiceDBClient): Promise<Map<string, number | undefined>> {
  const schema = await readFile(new URL('../../../src/spicedb/schema.zed', import.meta.url), 'utf8');
  const relationships = new Map<string, number | undefined>();
  for (const [, resourceType] of schema.matchAll(/^definition\s+(\S+)/gm)) {
    for await (const page of spicedb.readRelationships({ resourceType: resourceType as string })) {
      for (const relationship of page.relationships) {
        relationships.set(tupleKey(relationship), relationship.expiresAt?.getTime());
      }
    }
  }
  return relationships;
}

/** A session on the production PostgreSQL as its superuser, at the postgres Service's cluster address. */
export async function postgresAsSuperuser(database: string): Promise<pg.Client> {
  const { db } = topology();
  const password = Buffer.from(
    await kubectl('get', 'secret', 'postgres', '-n', db, '-o', 'jsonpath={.data.password}'),
    'base64',
  ).toString();
  const host = await kubectl('get', 'service', 'postgres', '-n', db, '-o', 'jsonpath={.spec.clusterIP}');
  const client = new pg.Client({ host, port: 5432, user: 'postgres', password, database });
  await client.connect();
  return client;
}
