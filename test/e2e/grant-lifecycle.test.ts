import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { PolicyGrant } from '../../src/api/v1alpha1/index.js';
import { EVENT_BATCH, memberEvent, type MemberEvent } from '../support/member-events.js';
import { POLL_TIMEOUT_MS } from '../../dev/wait/until.js';
import { SHORT_LIFETIME_MS } from '../support/timeouts.js';
import { untilBarrierAgrees } from '../support/barrier-agreement.js';
import {
  acl,
  check,
  decisionMetrics,
  e2e,
  eventually,
  kubectl,
  kubectlJson,
  sampleItemPartiesForFile,
  token,
  userAllowed,
  userCheckRequest,
} from './support/stack-client.js';

const parties = sampleItemPartiesForFile();

const inOneYear = () => new Date(Date.now() + 365 * 86_400_000).toISOString();

function grantItem(overrides: Record<string, unknown>) {
  return {
    policyType: 'INDIVIDUAL',
    itemId: parties.item.itemId,
    itemType: parties.item.itemType,
    expiryTime: inOneYear(),
    constraints: { access: [{ accessType: 'api' }] },
    ...overrides,
  };
}

const checkRequest = (userId: string, relation = 'api') =>
  userCheckRequest(userId, parties.item.itemId, relation);

async function create(grant: Record<string, unknown>): Promise<string> {
  const reply = await acl<{ results: { policyId: string }[] }>('/policy', {
    method: 'POST',
    token: parties.owner,
    body: { request: [grant] },
  });
  expect(reply.status).toBe(201);
  return (reply.body.results[0] as { policyId: string }).policyId;
}

async function grantByPolicyId(policyId: string): Promise<PolicyGrant | undefined> {
  const list = await kubectlJson<{ items: PolicyGrant[] }>('get', 'policygrants', '-n', e2e().namespace);
  return list.items.find((grant) => grant.metadata?.uid === policyId);
}

async function enforcedStatus(policyId: string): Promise<string | undefined> {
  const grant = await grantByPolicyId(policyId);
  return grant?.status?.conditions?.find((c) => c.type === 'Enforced')?.status;
}

const allowedNow = (userId: string, relation = 'api') =>
  userAllowed(parties.checker, userId, parties.item.itemId, relation);
const becomes = (userId: string, expected: boolean, relation = 'api', timeoutMs = POLL_TIMEOUT_MS) =>
  eventually(
    `check ${relation} for ${userId} to be ${expected}`,
    async () => ((await allowedNow(userId, relation)) === expected ? true : undefined),
    timeoutMs,
  );

describe('a grant, from the outside', () => {
  it('is created over HTTP, shown Enforced by kubectl, allowed, revoked, then denied', async () => {
    const consumer = randomUUID();
    expect(await allowedNow(consumer)).toBe(false);
    const policyId = await create(grantItem({ userId: consumer }));

    await eventually('Enforced=True', async () =>
      (await enforcedStatus(policyId)) === 'True' ? true : undefined,
    );
    const table = await kubectl('get', 'policygrants', '-n', e2e().namespace);
    const row = table.split('\n').find((line) => line.includes(consumer)) ?? '';
    expect(row).toMatch(/INDIVIDUAL/);
    expect(row).toMatch(/ACTIVE/);
    expect(row).toMatch(/True/);
    await becomes(consumer, true);

    const revoked = await acl(`/policy?id=${policyId}`, { method: 'DELETE', token: parties.owner });
    expect(revoked.status).toBe(200);
    await becomes(consumer, false);
    expect((await grantByPolicyId(policyId))?.status?.state).toBe('DELETED');
  });

  it('answers the check with canonical names and the registry alias', async () => {
    const consumer = randomUUID();
    await create(grantItem({ userId: consumer, constraints: { access: [{ accessType: 'file' }] } }));
    await becomes(consumer, true, 'file');
    const reply = await check(parties.checker, {
      ...checkRequest(consumer, 'file'),
      resource_type: parties.item.itemType,
    });
    expect(reply.status).toBe(200);
    // The owner is no enforcement point: the check is not an oracle for end users.
    const asOwner = await check(parties.owner, checkRequest(consumer, 'file'));
    expect(asOwner.status).toBe(403);
    expect(asOwner.body.result.allowed).toBe(false);
    expect(reply.body.result).toMatchObject({
      allowed: true,
      subject: { type: 'user', id: consumer },
      object: { type: 'resource', id: parties.item.itemId },
      relation: 'file',
    });
  });

  it('lets in the members a membership event adds, and no one else; a removal event shuts them out again', async () => {
    const organisation = randomUUID();
    const [member, outsider] = [randomUUID(), randomUUID()];
    await enforcedGroupGrant(organisation);
    expect(await allowedNow(member, 'sub'), 'no membership yet: default deny').toBe(false);

    const key = { organisationId: organisation, userId: member };
    const added = memberEvent('added', key, new Date(Date.now() - 60_000).toISOString());
    expect(await sendMemberEvents([added])).toEqual(['applied']);
    await becomes(member, true, 'sub');
    expect(await allowedNow(outsider, 'sub')).toBe(false);
    const table = await kubectl('get', 'memberships', '-n', e2e().namespace);
    expect(table.split('\n').find((line) => line.includes(member))).toMatch(/True/);

    const removed = memberEvent('removed', key);
    expect(await sendMemberEvents([removed])).toEqual(['applied']);
    await becomes(member, false, 'sub');
    // A redelivery, and an added event older than the removal: nothing changes, and the answer says so.
    const olderAdded = memberEvent('added', key, new Date(Date.now() - 30_000).toISOString());
    expect(await sendMemberEvents([removed, olderAdded])).toEqual(['duplicate', 'stale']);
    expect(await allowedNow(member, 'sub')).toBe(false);
  });

  it('takes a snapshot of the members as the truth: adds and removes exactly the difference', async () => {
    const organisation = randomUUID();
    const [kept, dropped, joined] = [randomUUID(), randomUUID(), randomUUID()];
    await enforcedGroupGrant(organisation);
    expect(await replaceMembers(organisation, [kept, dropped])).toEqual({ added: 2, removed: 0 });
    await becomes(kept, true, 'sub');
    await becomes(dropped, true, 'sub');

    expect(await replaceMembers(organisation, [kept, joined])).toEqual({ added: 1, removed: 1 });
    await becomes(dropped, false, 'sub');
    await becomes(joined, true, 'sub');
    expect(await allowedNow(kept, 'sub')).toBe(true);
  });

  it('stops being enforced at its expiry time', async () => {
    const consumer = randomUUID();
    const policyId = await create(
      grantItem({ userId: consumer, expiryTime: new Date(Date.now() + SHORT_LIFETIME_MS).toISOString() }),
    );
    await becomes(consumer, true);
    await becomes(consumer, false, 'api', SHORT_LIFETIME_MS + POLL_TIMEOUT_MS);
    await eventually('state EXPIRED', async () =>
      (await grantByPolicyId(policyId))?.status?.state === 'EXPIRED' ? true : undefined,
    );
  });
});

describe('a grant’s status and the check agree, without a token', () => {
  it('allows once kubectl shows Enforced=True and denies once it shows the revocation, through the revision barrier', async () => {
    const agreement = (consumer: string) => ({
      allowed: () => allowedNow(consumer),
      metricsText: decisionMetrics,
    });
    for (let round = 0; round < 3; round++) {
      const consumer = randomUUID();
      const policyId = await create(grantItem({ userId: consumer }));
      await eventually('Enforced=True', async () =>
        (await enforcedStatus(policyId)) === 'True' ? true : undefined,
      );
      await untilBarrierAgrees({
        ...agreement(consumer),
        expected: true,
        what: `round ${round}: Enforced=True`,
      });
      const revoked = await acl(`/policy?id=${policyId}`, { method: 'DELETE', token: parties.owner });
      expect(revoked.status).toBe(200);
      await eventually('Enforced=False', async () =>
        (await enforcedStatus(policyId)) === 'False' ? true : undefined,
      );
      await untilBarrierAgrees({
        ...agreement(consumer),
        expected: false,
        what: `round ${round}: Enforced=False`,
      });
    }
  });
});

describe('read-your-grant (Prefer: wait)', () => {
  interface Report {
    policyId: string;
    enforced: boolean;
    reason?: string;
    zedToken?: string;
  }

  it('answers once the grant is enforced, and a check with its token sees it at once; likewise the revocation', async () => {
    const consumer = randomUUID();
    const created = await acl<{ results: Report[] }>('/policy', {
      method: 'POST',
      token: parties.owner,
      body: { request: [grantItem({ userId: consumer })] },
      headers: { prefer: 'wait=30' },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('preference-applied')).toBe('wait=30');
    const [grant] = created.body.results as [Report];
    expect(grant).toMatchObject({ enforced: true, reason: 'Projected' });
    expect(grant.zedToken).toBeTruthy();
    const allowed = await check(parties.checker, {
      ...checkRequest(consumer),
      consistency_token: grant.zedToken as string,
    });
    expect(allowed.body.result.allowed).toBe(true);

    const revoked = await acl<{ results: Report[] }>(`/policy?id=${grant.policyId}`, {
      method: 'DELETE',
      token: parties.owner,
      headers: { prefer: 'wait=30' },
    });
    expect(revoked.status).toBe(200);
    const [revocation] = revoked.body.results as [Report];
    expect(revocation).toMatchObject({ enforced: true, reason: 'Revoked' });
    const denied = await check(parties.checker, {
      ...checkRequest(consumer),
      consistency_token: revocation.zedToken as string,
    });
    expect(denied.body.result.allowed).toBe(false);
  });
});

/** A GROUP grant of `sub` access for the members of `organisationId`, once kubectl shows it Enforced. */
async function enforcedGroupGrant(organisationId: string): Promise<void> {
  const policyId = await create(
    grantItem({
      policyType: 'GROUP',
      constraints: { access: [{ accessType: 'sub' }], subjects: { allowedOrgIds: [organisationId] } },
    }),
  );
  await eventually('Enforced=True', async () =>
    (await enforcedStatus(policyId)) === 'True' ? true : undefined,
  );
}

/** PUT .../members as a producer: the organisation's members are exactly `userIds` afterwards. */
async function replaceMembers(organisationId: string, userIds: string[]): Promise<unknown> {
  const reply = await acl<{ results: unknown[] }>(`/organisations/${organisationId}/members`, {
    method: 'PUT',
    token: await token(randomUUID(), { roles: ['platform_event_producer'] }),
    body: { userIds },
  });
  expect(reply.status).toBe(200);
  return reply.body.results[0];
}

/** Sends events to POST /events as a producer (role platform_event_producer); answers their outcomes in order. */
async function sendMemberEvents(events: MemberEvent[]): Promise<string[]> {
  const reply = await acl<{ results: { outcome: string }[] }>('/events', {
    method: 'POST',
    token: await token(randomUUID(), { roles: ['platform_event_producer'] }),
    body: events,
    headers: { 'content-type': EVENT_BATCH },
  });
  expect(reply.status).toBe(200);
  return reply.body.results.map((result) => result.outcome);
}
