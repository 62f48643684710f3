import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../../src/audit/audit-record.js';
import type { Explanation } from '../../../src/verdict/explanation.js';
import { uniqueId } from '../support/cluster.js';
import { memberEvent, STRUCTURED_EVENT } from '../../support/member-events.js';
import { AclHarness, group, until, type Caller } from './support/acl-harness.js';
import { AuditDatabase } from './support/audit-records.js';

// What GET /v2/explain tells about a tenant to those who may ask, and what its refusals leave in the audit trail:
// membership facts only for the organisations the caller administers; a refused explain's record the same for
// an existing and a missing item; refusals recorded up to a limit per actor. Real kube-apiserver and PostgreSQL.

/** Small, so that a burst passes it; the window outlasts the file. */
const REFUSAL_LIMIT = { requests: 3, windowMs: 3_600_000 };

const harness = new AclHarness();
const database = new AuditDatabase(harness);
const providerOrg = randomUUID();
/** The consumer organisation a provider names in its GROUP grant, without administering it. */
const consumerOrg = randomUUID();
let provider: Caller;
let providerAdmin: Caller;
let cosAdmin: Caller;
let itemId: string;

beforeAll(async () => {
  await harness.start('acl-explain', { refusalLimit: REFUSAL_LIMIT });
  provider = await harness.user({ org: providerOrg });
  providerAdmin = await harness.user({ roles: ['org_admin'], org: providerOrg });
  cosAdmin = await harness.user({ roles: ['cos_admin'] });
  itemId = (await harness.catalogItem({ ownerId: provider.id, organisationId: providerOrg })).spec.itemId;
});

afterAll(() => harness.stop());

async function explained(caller: Caller, userId: string, item = itemId) {
  const query = new URLSearchParams({ userId, itemId: item, accessType: 'api' });
  const requestId = uniqueId('req');
  const answer = await harness.request<{ results: Explanation[] }>('GET', `/explain?${query}`, {
    caller,
    headers: { 'x-request-id': requestId },
  });
  return { ...answer, requestId, explanation: answer.body.results?.[0] };
}

const membershipsIn = (explanation: Explanation | undefined) =>
  (explanation?.objects ?? []).filter((object) => object.kind === 'Membership');

async function sendEvent(change: 'added' | 'removed', userId: string, time: string): Promise<void> {
  const answer = await harness.request('POST', '/events', {
    caller: cosAdmin,
    body: memberEvent(change, { organisationId: consumerOrg, userId }, time),
    headers: { 'content-type': STRUCTURED_EVENT },
  });
  expect(answer.status).toBe(200);
}

describe('GET /explain: membership facts', () => {
  const member = randomUUID();
  const removed = randomUUID();
  const stranger = randomUUID();

  beforeAll(async () => {
    const created = await harness.request('POST', '/policy', {
      caller: provider,
      body: { request: [group(itemId, [consumerOrg, providerOrg])] },
    });
    expect(created.status).toBe(201);
    await sendEvent('added', member, '2026-10-01T10:00:00.000Z');
    await sendEvent('added', removed, '2026-10-01T10:00:00.000Z');
    await sendEvent('removed', removed, '2026-11-01T10:00:00.000Z');
    const { cache } = harness.api;
    await until(
      () =>
        cache.isOrganisationMember(consumerOrg, member) &&
        cache.membership({ organisationId: consumerOrg, userId: removed })?.spec.removedAt !== undefined,
      'the memberships cached',
    );
  });

  it('shows a provider one neutral object for an organisation it only names in a GROUP grant', async () => {
    const answers = await Promise.all(
      [member, removed, stranger].map((userId) => explained(provider, userId)),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const [ofMember, ofRemoved, ofStranger] = answers.map((answer) => membershipsIn(answer.explanation));
    // The owner administers neither organisation (an org_admin role would be needed for its own).
    const neutral = (organisationId: string) => ({
      kind: 'Membership',
      ref: '',
      effective: false,
      reason: 'Undisclosed',
      message: `the memberships of organisation ${organisationId} are shown only to its org_admins and cos_admin`,
    });
    expect(ofMember).toEqual(expect.arrayContaining([neutral(consumerOrg), neutral(providerOrg)]));
    expect(ofRemoved).toEqual(ofMember);
    expect(ofStranger).toEqual(ofMember);
    for (const answer of answers) {
      expect(JSON.stringify(answer.body)).not.toMatch(/is a member of|was removed|2026-11-01/);
    }
    // The verdict on the provider's own item stays the real one, without naming the organisation.
    expect(answers.map((answer) => answer.explanation?.allowed)).toEqual([true, false, false]);
    expect(answers[0]?.explanation?.message).toBe(
      'allowed by a GROUP grant, through a Membership the reader may not see',
    );
  });

  it("shows an org_admin its own organisation's memberships, and cos_admin every one", async () => {
    const ofAdmin = membershipsIn((await explained(providerAdmin, removed)).explanation);
    expect(ofAdmin.map((object) => object.reason).sort()).toEqual(['NotMember', 'Undisclosed']);
    const ofCosAdmin = membershipsIn((await explained(cosAdmin, removed)).explanation);
    expect(ofCosAdmin.map((object) => object.message)).toContainEqual(
      expect.stringContaining(`user ${removed} was removed from organisation ${consumerOrg} at 2026-11-01`),
    );
  });
});

/** What a reader of the record can compare: everything but the request's own id and time, and the chain. */
function comparable(record: AuditRecord | undefined) {
  const {
    id: _id,
    time: _time,
    requestId: _requestId,
    prevHash: _prevHash,
    hash: _hash,
    ...rest
  } = record ?? ({} as AuditRecord);
  return rest;
}

describe('GET /explain refused: the audit trail', () => {
  it('records the same for an existing and a missing item, as the refused caller reads its own', async () => {
    const stranger = await harness.user({ org: randomUUID() });
    const missingId = `urn:dx:item:${uniqueId('later')}`;
    const subject = randomUUID();
    const refusedMissing = await explained(stranger, subject, missingId);
    await harness.catalogItem({ ownerId: provider.id, organisationId: providerOrg, itemId: missingId });
    const refusedExisting = await explained(stranger, subject, missingId);
    expect([refusedMissing.status, refusedExisting.status]).toEqual([403, 403]);

    const [ofMissing] = await database.ofRequest(refusedMissing.requestId);
    const [ofExisting] = await database.ofRequest(refusedExisting.requestId);
    expect(ofMissing?.target).toEqual({ kind: 'item', id: missingId, itemId: missingId });
    expect(comparable(ofExisting)).toEqual(comparable(ofMissing));
    const own = await harness.request<{ results: AuditRecord[] }>('GET', '/audit?action=explain.read', {
      caller: stranger,
    });
    expect(own.body.results.map(comparable)).toEqual([comparable(ofExisting), comparable(ofMissing)]);
  });

  it("records a burst of refusals up to the limit, counts the rest, and leaves none in the item's organisation", async () => {
    const stranger = await harness.user({ org: randomUUID() });
    const burst = 12;
    const before = await unrecordedExplains();
    for (let n = 0; n < burst; n++) expect((await explained(stranger, randomUUID())).status).toBe(403);

    const records = await database.query<{ id: string }>(
      "SELECT id FROM audit.records WHERE actor_id = $1 AND action = 'explain.read'",
      [stranger.id],
    );
    expect(records).toHaveLength(REFUSAL_LIMIT.requests);
    expect((await unrecordedExplains()) - before).toBe(burst - REFUSAL_LIMIT.requests);
    const trail = await harness.request<{ results: AuditRecord[] }>('GET', '/audit?limit=1000', {
      caller: providerAdmin,
    });
    expect(trail.body.results.filter((record) => record.actor.id === stranger.id)).toEqual([]);
  });
});

async function unrecordedExplains(): Promise<number> {
  const metrics = await harness.request<string>('GET', '/metrics');
  const line = metrics.body
    .split('\n')
    .find((text) => text.startsWith('policygrant_audit_refusals_unrecorded_total{action="explain.read"}'));
  return Number(line?.split(' ').at(-1) ?? 0);
}
