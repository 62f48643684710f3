import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AccessRequest } from '../../../src/api/v1alpha1/index.js';
import { AuditStore } from '../../../src/audit/audit-store.js';
import { CONTROLLER_FIELD_MANAGER } from '../../../src/audit/field-managers.js';
import { migrate } from '../../../src/audit/migrations.js';
import { recordFromRow, RECORD_COLUMNS, type RecordRow } from '../../../src/audit/record-rows.js';
import { EXPIRED_BY } from '../../../src/controller/access-requests/access-request-reconciler.js';
import type { ControllerEnvironment } from '../../../src/controller/controller-config.js';
import { until } from '../../../dev/wait/until.js';
import { asSuperuser, testDatabase } from '../support/database.js';
import { AccessRequestResources } from './support/access-requests.js';
import { useControllerFixture } from './support/harness.js';

// The controller's part of the access-request lifecycle, with a pending TTL of 4 s: a request applied without
// a state is marked PENDING, one pending past the TTL becomes EXPIRED and is audited once, a decided one stays
// as decided; each decision has one Event on the request.

const env: ControllerEnvironment = { ACCESS_REQUEST_PENDING_TTL: '4s' };
let databaseName: string;

beforeAll(async () => {
  const database = await testDatabase('access_requests');
  const owner = new AuditStore({ connectionString: database.url });
  await migrate(owner.pool);
  await owner.close();
  databaseName = database.name;
  env.DATABASE_URL = database.url;
});

const fixture = useControllerFixture('access-requests', env);
const requests = () => new AccessRequestResources(fixture.aclNamespace);
const apply = () => requests().apply();
const current = (name: string) => requests().get(name);

async function untilState(name: string, state: string): Promise<AccessRequest> {
  let seen: AccessRequest | undefined;
  await until(async () => {
    seen = await current(name);
    return seen.status?.state === state;
  }, `${name} ${state}`);
  return seen as AccessRequest;
}

async function auditActionsOn(uid: string): Promise<string[]> {
  const { rows } = await asSuperuser<RecordRow>(
    `SELECT ${RECORD_COLUMNS} FROM audit.records WHERE target_id = $1 ORDER BY id`,
    [uid],
    databaseName,
  );
  return rows.map(recordFromRow).map((record) => `${record.actor.id} ${record.action}`);
}

async function eventsOn(name: string): Promise<string[]> {
  return (await fixture.resources.listEvents(fixture.aclNamespace))
    .filter((event) => event.regarding?.name === name)
    .map((event) => event.reason ?? '');
}

describe('an AccessRequest', () => {
  it('applied without a state is PENDING, then EXPIRED past the TTL, with an Expired Event', async () => {
    const { metadata } = await apply();
    const name = metadata.name ?? '';
    await untilState(name, 'PENDING');
    const expired = await untilState(name, 'EXPIRED');
    expect(expired.status).toMatchObject({ decidedBy: EXPIRED_BY });
    expect(Date.parse(expired.status?.decidedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(String(metadata.creationTimestamp)) + 4_000,
    );
    await until(async () => (await eventsOn(name)).includes('Expired'), `Expired Event on ${name}`);
    const uid = metadata.uid ?? '';
    await until(async () => (await auditActionsOn(uid)).length > 0, `the audit record of ${name}'s expiry`);
    expect(await auditActionsOn(uid)).toEqual([`${EXPIRED_BY} accessrequest.expired`]);
  });

  it("is marked PENDING by a status write under the controller's field manager", async () => {
    const name = (await apply()).metadata.name ?? '';
    const pending = await untilState(name, 'PENDING');
    const statusWriters = (pending.metadata.managedFields ?? [])
      .filter((entry) => entry.subresource === 'status')
      .map((entry) => entry.manager);
    expect(statusWriters).toEqual([CONTROLLER_FIELD_MANAGER]);
  });

  it('decided before the TTL stays decided, and has one Event for its decision', async () => {
    const decided = (await apply()).metadata.name ?? '';
    const pending = (await apply()).metadata.name ?? '';
    await untilState(decided, 'PENDING');
    await requests().writeStatus(decided, {
      state: 'REJECTED',
      decidedBy: randomUUID(),
      decidedAt: new Date().toISOString(),
      reason: 'not for this project',
    });
    // The other request, applied after this one, expiring shows the controller past this one's due time.
    await untilState(pending, 'EXPIRED');
    expect((await current(decided)).status?.state).toBe('REJECTED');
    await until(async () => (await eventsOn(decided)).includes('Rejected'), `Rejected Event on ${decided}`);
    expect(await eventsOn(decided)).toEqual(['Rejected']);
    // The controller records expiries only: a decision is the ACL API's to record.
    expect(await auditActionsOn((await current(decided)).metadata.uid ?? '')).toEqual([]);
  });
});
