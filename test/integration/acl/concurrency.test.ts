import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import { claimKeys } from '../../../src/acl/policies/grant-claims.js';
import { startAclApi, type RunningAclApi } from '../../../src/acl/acl-server.js';
import { AclHarness, group, individual, type Caller } from './support/acl-harness.js';

// The 409 rule under concurrency and across replicas: claims make it hold without a check-then-create race,
// and of creates that overlap exactly one wins, however their claims interleave.

const harness = new AclHarness();
let secondReplica: RunningAclApi;
let owner: Caller;
let itemId: string;

beforeAll(async () => {
  await harness.start('acl-concurrency');
  secondReplica = await startAclApi(await harness.config());
  const orgId = randomUUID();
  owner = await harness.user({ org: orgId });
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
});

afterAll(async () => {
  await secondReplica?.stop();
  await harness.stop();
});

interface Answer {
  status: number;
  detail: string;
  policyIds: string[];
}

async function post(baseUrl: string, body: unknown): Promise<Answer> {
  const response = await fetch(`${baseUrl}/policy`, {
    method: 'POST',
    headers: { authorization: owner.authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { detail: string; results?: { policyId: string }[] };
  return {
    status: response.status,
    detail: answer.detail,
    policyIds: (answer.results ?? []).map((result) => result.policyId),
  };
}

/** Alternates between the two replicas. */
const replicaUrl = (index: number) => (index % 2 ? secondReplica.url : harness.api.url);

/** `subject|accessType` of every claim a grant occupies. */
const claimedBy = (grant: PolicyGrant) =>
  claimKeys(grant.spec).map((key) => `${key.subject}|${key.accessType}`);

describe('50 simultaneous identical creates', () => {
  it('on one replica: exactly one 201 and 49 409s naming the user and access type', async () => {
    const userId = randomUUID();
    const body = { request: [individual(itemId, userId, ['api'])] };
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(harness.api.url, body)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(49);
    for (const answer of answers.filter((a) => a.status === 409)) {
      expect(answer.detail).toContain(`user ${userId}`);
      expect(answer.detail).toContain('access type api');
    }
    const grants = (await harness.listGrants()).filter((grant) => grant.spec.userId === userId);
    expect(grants).toHaveLength(1);
  });

  it('spread over two replicas: exactly one 201', async () => {
    const userId = randomUUID();
    const body = { request: [individual(itemId, userId, ['api', 'file'])] };
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) => post(replicaUrl(index), body)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(49);
    expect((await harness.listGrants()).filter((grant) => grant.spec.userId === userId)).toHaveLength(1);
  });

  it('overlapping requests (same user, different access type sets): every access type granted exactly once', async () => {
    // Each access type is also asked for alone, so whoever loses it, the lone request for it must win.
    const userId = randomUUID();
    const sets = [['api'], ['api', 'file'], ['file', 'sub'], ['sub'], ['api', 'sub'], ['file']];
    await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        post(replicaUrl(index), { request: [individual(itemId, userId, sets[index % sets.length])] }),
      ),
    );
    const granted = (await harness.listGrants())
      .filter((grant) => grant.spec.userId === userId)
      .flatMap((grant) => grant.spec.constraints.access.map((access) => access.accessType));
    expect(granted.sort()).toEqual(['api', 'file', 'sub']);
  });

  it('after a revoke, concurrent re-creates take the vacant claim exactly once', async () => {
    const userId = randomUUID();
    const first = await post(harness.api.url, { request: [individual(itemId, userId)] });
    expect(first.status).toBe(201);
    const [grant] = (await harness.listGrants()).filter((g) => g.spec.userId === userId);
    const revoke = await harness.request('DELETE', `/policy?id=${grant?.metadata.uid}`, { caller: owner });
    expect(revoke.status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        post(replicaUrl(index), { request: [individual(itemId, userId)] }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(19);
  });
});

describe('rounds of identical and overlapping creates over two replicas', () => {
  /** Requests that overlap pairwise (every two share a claim), on subjects no other group uses. */
  interface OverlappingGroup {
    name: string;
    subjects: string[];
    requests: unknown[];
  }

  function groupsOfOneRound(): OverlappingGroup[] {
    const [alice, bob, carol] = [randomUUID(), randomUUID(), randomUUID()];
    const orgs = [randomUUID(), randomUUID(), randomUUID()];
    const times = <T>(count: number, requests: T[]) => Array.from({ length: count }, () => requests).flat();
    return [
      {
        name: 'identical',
        subjects: [`user:${alice}`],
        requests: times(12, [individual(itemId, alice, ['api', 'file', 'sub'])]),
      },
      {
        name: 'sharing one access type',
        subjects: [`user:${bob}`],
        requests: times(3, [['api'], ['api', 'file'], ['sub', 'api'], ['file', 'api', 'sub']]).map((types) =>
          individual(itemId, bob, types),
        ),
      },
      {
        name: 'overlapping pairwise, in a cycle',
        subjects: [`user:${carol}`],
        requests: times(4, [
          ['api', 'file'],
          ['file', 'sub'],
          ['sub', 'api'],
        ]).map((types) => individual(itemId, carol, types)),
      },
      {
        name: 'GROUP grants with intersecting organisations',
        subjects: orgs.map((org) => `organization:${org}`),
        requests: times(4, [
          [orgs[0], orgs[1]],
          [orgs[1], orgs[2]],
          [orgs[2], orgs[0]],
        ]).map((orgIds) => group(itemId, orgIds as string[], ['api', 'file'])),
      },
      ...Array.from({ length: 3 }, (_, pair) => oppositeOrders(`pair ${pair}`)),
    ];
  }

  /**
   * Two requests for the same 12 triples listed in opposite orders: a create that claimed in request order,
   * 8 at a time, held the first triples of each list and found the others in flight, so both lost.
   */
  function oppositeOrders(name: string): OverlappingGroup {
    const orgs = Array.from({ length: 6 }, () => randomUUID());
    return {
      name: `the same triples in opposite orders, ${name}`,
      subjects: orgs.map((org) => `organization:${org}`),
      requests: [group(itemId, orgs, ['api', 'file']), group(itemId, [...orgs].reverse(), ['file', 'api'])],
    };
  }

  function subjectsOf(grant: PolicyGrant): string[] {
    return [...new Set(claimKeys(grant.spec).map((key) => key.subject))];
  }

  it('exactly one 201 per overlapping group; its grant and bound claims exist, the losers left nothing', async () => {
    for (let round = 0; round < 4; round++) {
      const groups = groupsOfOneRound();
      // Interleave the groups so that every replica sees every group's requests arrive together.
      const requests = groups.flatMap((g, groupIndex) =>
        g.requests.map((request, index) => ({
          groupIndex,
          request,
          order: index * groups.length + groupIndex,
        })),
      );
      requests.sort((a, b) => a.order - b.order);
      const answers = await Promise.all(
        requests.map(({ request }, index) => post(replicaUrl(index), { request: [request] })),
      );
      const [grants, claims] = await Promise.all([harness.listGrants(), harness.listClaims()]);
      groups.forEach((g, groupIndex) => {
        const mine = answers.filter((_, index) => requests[index]?.groupIndex === groupIndex);
        const context = `round ${round}, ${g.name}: ${mine.map((answer) => answer.status).join(' ')}`;
        expect(
          mine.filter((answer) => answer.status === 201),
          context,
        ).toHaveLength(1);
        expect(
          mine.filter((answer) => answer.status === 409),
          context,
        ).toHaveLength(mine.length - 1);
        const winnerId = mine.find((answer) => answer.status === 201)?.policyIds[0];
        const inGroup = (subjects: string[]) => subjects.some((subject) => g.subjects.includes(subject));
        const groupGrants = grants.filter((grant) => inGroup(subjectsOf(grant)));
        expect(
          groupGrants.map((grant) => grant.metadata.uid),
          context,
        ).toEqual([winnerId]);
        const winner = groupGrants[0] as PolicyGrant;
        const groupClaims = claims.map((claim) => claim.spec).filter((claim) => inGroup([claim.subject]));
        expect(groupClaims.map((claim) => `${claim.subject}|${claim.accessType}`).sort(), context).toEqual(
          claimedBy(winner).sort(),
        );
        for (const claim of groupClaims) {
          expect(claim, context).toMatchObject({ grantName: winner.metadata.name, state: 'bound' });
        }
      });
    }
  });
});
