import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import {
  GROUP_VERSION,
  MEMBERSHIP_KIND,
  POLICY_GRANT_KIND,
} from '../../../src/api/v1alpha1/group-version.js';
import { membershipName } from '../../../src/api/v1alpha1/membership.js';
import { FENCE_OBJECT_TYPE } from '../../../src/controller/fenced-spicedb.js';
import { TEST_TIMEOUT_MS } from '../../support/timeouts.js';
import {
  acl,
  e2e,
  eventually,
  kubectl,
  sampleItemPartiesForFile,
  token,
} from '../../e2e/support/stack-client.js';
import { release } from '../support/release.js';
import {
  allRelationships,
  decisionReplicas,
  everyReplica,
  grant,
  postgresAsSuperuser,
  readOnlySpiceDB,
  revoke,
  topology,
} from '../support/production-topology.js';
import { sleep } from '../../../dev/wait/sleep.js';

// Disaster recovery on the production topology: SpiceDB's database is dropped and recreated (migrated, empty)
// while grants, Memberships and Delegations exist. The custom resources are the record: the controller finds
// SpiceDB without its schema, writes it and re-projects everything; meanwhile every check fails closed, and a
// revoked grant is never allowed. Recovered means SpiceDB holds exactly the relationships it held before (a full
// ReadRelationships of every definition, before and after). The recovery follows the runbook (docs/upgrade.md,
// "Disaster recovery: SpiceDB's datastore lost"), its SQL read from the docs, so a runbook that does not work
// fails here.

/** Grants created through the Kubernetes API, as GitOps applies them. */
const GRANTS = 10_000;
const GRANTS_PER_FILE = 500;
const MEMBERSHIPS = 20;
const DELEGATIONS = 5;
/** Creating and projecting ten thousand grants, then rebuilding them: many minutes on a loaded node. */
const DISASTER_RECOVERY_BUDGET_MS = 8 * TEST_TIMEOUT_MS;
/** Waits that scale with the grants (projection, rebuild). */
const REBUILD_TIMEOUT_MS = 4 * TEST_TIMEOUT_MS;

const run = promisify(execFile);

const RUNBOOK = "## Disaster recovery: SpiceDB's datastore lost";

const parties = sampleItemPartiesForFile();

const inOneYear = () => new Date(Date.now() + 365 * 86_400_000).toISOString();

/** Server-side apply of the objects (idempotent), in files of GRANTS_PER_FILE applied four at a time. */
async function createObjects(objects: object[]): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'policy-grant-dr-'));
  const files: string[] = [];
  for (let start = 0; start < objects.length; start += GRANTS_PER_FILE) {
    const file = join(dir, `objects-${start}.json`);
    await writeFile(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: objects.slice(start, start + GRANTS_PER_FILE),
      }),
    );
    files.push(file);
  }
  const { kubectl: binary, kubeconfig } = e2e();
  const limit = pLimit(4);
  await Promise.all(
    files.map((file) =>
      limit(() =>
        run(
          binary,
          [
            '--kubeconfig',
            kubeconfig,
            'apply',
            '--server-side',
            '--field-manager=disaster-recovery-test',
            '-f',
            file,
            '-o',
            'name',
          ],
          {
            maxBuffer: 64 << 20,
          },
        ),
      ),
    ),
  );
}

function bulkGrants() {
  const { namespace } = release();
  return Array.from({ length: GRANTS }, (_, index) => ({
    apiVersion: GROUP_VERSION,
    kind: POLICY_GRANT_KIND,
    metadata: { name: `dr-${index}`, namespace },
    spec: {
      policyType: 'INDIVIDUAL',
      // Fixed by the index, so that applying the grants again changes nothing.
      userId: `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`,
      itemId: parties.item.itemId,
      itemType: parties.item.itemType,
      expiryTime: inOneYear(),
      constraints: { access: [{ accessType: 'api' }] },
    },
  }));
}

function memberships() {
  return Array.from({ length: MEMBERSHIPS }, () => {
    const key = { organisationId: parties.item.organisationId, userId: randomUUID() };
    return {
      apiVersion: GROUP_VERSION,
      kind: MEMBERSHIP_KIND,
      metadata: { name: membershipName(key), namespace: release().namespace },
      spec: key,
    };
  });
}

/** Consumers with an acknowledged grant, each delegating querier to an agent through the ACL API. */
async function delegations(): Promise<void> {
  for (let index = 0; index < DELEGATIONS; index++) {
    // The audit trail may answer slowly while ten thousand grants are projected: a refused write (503) is retried.
    await eventually('a delegation to be created', async () => {
      const consumer = randomUUID();
      const granted = await grant(parties.owner, parties.item, consumer, true).catch(() => undefined);
      if (granted?.enforced !== true) return undefined;
      const reply = await acl('/delegations', {
        method: 'POST',
        token: await token(consumer),
        body: {
          agentId: randomUUID(),
          itemId: parties.item.itemId,
          relation: 'querier',
          expiryTime: inOneYear(),
        },
      });
      return reply.status === 201 ? true : undefined;
    });
  }
}

/** How many of the bulk grants report Enforced=True. */
async function enforcedBulkGrants(): Promise<number> {
  const lines = await kubectl(
    'get',
    'policygrants',
    '-n',
    release().namespace,
    '-o',
    'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Enforced")].status}{"\\n"}{end}',
  );
  return lines.split('\n').filter((line) => /^dr-\d+ True$/.test(line)).length;
}

/** The statements (one a line) of the `index`th SQL block after `heading` in a page of docs/. */
async function sqlBlock(page: string, heading: string, index = 0): Promise<string[]> {
  const text = await readFile(new URL(`../../../docs/${page}`, import.meta.url), 'utf8');
  const blocks = [...text.slice(text.indexOf(heading)).matchAll(/```sql\n([\s\S]*?)```/g)];
  const sql = blocks[index]?.[1];
  if (!sql) throw new Error(`docs/${page} has no SQL block ${index} after "${heading}"`);
  return sql.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('--'));
}

/** Runs statements as PostgreSQL's superuser in a database. */
async function runSql(database: string, statements: string[]): Promise<void> {
  const session = await postgresAsSuperuser(database);
  try {
    for (const statement of statements) await session.query(statement);
  } finally {
    await session.end();
  }
}

/** The loss: SpiceDB's database dropped under it. */
async function dropTheDatastore(): Promise<void> {
  await runSql('postgres', ['DROP DATABASE spicedb WITH (FORCE)']);
}

/** A Deployment restarted, and its rollout waited for. */
async function restart(deployment: string, namespace: string): Promise<void> {
  await kubectl('rollout', 'restart', `deployment/${deployment}`, '-n', namespace);
  await kubectl('rollout', 'status', `deployment/${deployment}`, '-n', namespace, '--timeout=10m');
}

/**
 * The runbook: the database recreated, migrated by SpiceDB's rollout (its init container), the read-only role's
 * grants of docs/production.md again, then the read-only SpiceDB restarted (it names the datastore it started on
 * in its tokens).
 */
async function recreateTheDatastore(): Promise<void> {
  await runSql('postgres', await sqlBlock('upgrade.md', RUNBOOK));
  await restart('spicedb', topology().spicedb);
  await runSql('spicedb', await sqlBlock('production.md', '### Roles, in an order that works', 1));
  await restart(`${release().name}-spicedb-read-only`, release().namespace);
}

/** The relationships the controller owns: all but the fence, which names the leadership term of the moment. */
async function managedRelationships(): Promise<Map<string, number | undefined>> {
  const spicedb = await readOnlySpiceDB();
  try {
    const all = await allRelationships(spicedb);
    for (const key of all.keys()) if (key.startsWith(`${FENCE_OBJECT_TYPE}:`)) all.delete(key);
    return all;
  } finally {
    spicedb.close();
  }
}

function difference(before: Map<string, number | undefined>, after: Map<string, number | undefined>) {
  const missing = [...before].filter(([key, expiresAt]) => after.get(key) !== expiresAt || !after.has(key));
  const extra = [...after.keys()].filter((key) => !before.has(key));
  return { missing: missing.length, extra: extra.length };
}

/** Checks on every replica, again and again until stopped: how often the revoked user was allowed. */
function watchRevoked(revokedUser: string) {
  let stopped = false;
  let allowed = 0;
  let checks = 0;
  const done = (async () => {
    while (!stopped) {
      const decisions = await everyReplica(
        await decisionReplicas(),
        parties.checker,
        revokedUser,
        parties.item.itemId,
      );
      checks += decisions.length;
      allowed += decisions.filter((decision) => decision === true).length;
      await sleep(250);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { checks, allowed };
    },
  };
}

describe('disaster recovery: SpiceDB datastore lost', () => {
  it(
    `rebuilds SpiceDB from ${GRANTS} grants, Memberships and Delegations, failing closed meanwhile`,
    { timeout: DISASTER_RECOVERY_BUDGET_MS },
    async () => {
      // The Delegations first: each waits for its consumer's grant to be enforced, which behind ten thousand
      // grants in the controller's queue would take the projection's minutes.
      await delegations();
      const createStarted = Date.now();
      await createObjects([...bulkGrants(), ...memberships()]);
      const created = Date.now();
      await eventually(
        `the ${GRANTS} grants to be Enforced`,
        async () => ((await enforcedBulkGrants()) === GRANTS ? true : undefined),
        REBUILD_TIMEOUT_MS,
      );
      const projected = Date.now();
      const kept = randomUUID();
      expect((await grant(parties.owner, parties.item, kept, true)).enforced).toBe(true);
      const gone = randomUUID();
      const revokedGrant = await grant(parties.owner, parties.item, gone, true);
      expect((await revoke(parties.owner, revokedGrant.policyId, true)).enforced).toBe(true);
      const before = await managedRelationships();
      expect(before.size).toBeGreaterThan(GRANTS);

      const revokedWatch = watchRevoked(gone);
      const lost = Date.now();
      await dropTheDatastore();
      await recreateTheDatastore();
      const migrated = Date.now();
      let after = new Map<string, number | undefined>();
      await eventually(
        'SpiceDB to hold every relationship again',
        async () => {
          after = await managedRelationships();
          const { missing, extra } = difference(before, after);
          return missing === 0 && extra === 0 ? true : undefined;
        },
        REBUILD_TIMEOUT_MS,
      );
      const rebuilt = Date.now();
      await eventually('the kept grant to be allowed by every replica', async () =>
        (await everyReplica(await decisionReplicas(), parties.checker, kept, parties.item.itemId)).every(
          Boolean,
        )
          ? true
          : undefined,
      );
      const enforced = Date.now();
      // Recovered, as the runbook has it: a new change is acknowledged with `Prefer: wait` again (once the
      // controller's queue has taken in the rebuild, and every replica's Watch names the new datastore).
      const afterwards = await eventually(
        'a grant made with Prefer: wait to be acknowledged',
        async () => {
          const granted = await grant(parties.owner, parties.item, randomUUID(), true);
          return granted.enforced === true ? granted : undefined;
        },
        REBUILD_TIMEOUT_MS,
      );
      const acknowledged = Date.now();
      const revokedChecks = await revokedWatch.stop();
      expect((await revoke(parties.owner, afterwards.policyId, true)).enforced).toBe(true);
      console.log(
        `[production] disaster recovery: ${GRANTS} grants created in ${created - createStarted} ms, all Enforced ` +
          `${projected - created} ms later; ${before.size} relationships; database dropped, recreated and migrated in ` +
          `${migrated - lost} ms; SpiceDB held every relationship again ${rebuilt - lost} ms after the drop ` +
          `(${JSON.stringify(difference(before, after))} missing/extra), every replica allowed again after ` +
          `${enforced - lost} ms; a change acknowledged with Prefer: wait again after ${acknowledged - lost} ms; ` +
          `the revoked user checked ${revokedChecks.checks} times meanwhile, allowed ${revokedChecks.allowed}`,
      );
      expect(difference(before, after)).toEqual({ missing: 0, extra: 0 });
      expect(revokedChecks.allowed).toBe(0);
    },
  );
});
