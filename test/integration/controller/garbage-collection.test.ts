import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AGENT_KIND, AGENT_RESOURCE, agentName, GROUP_VERSION } from '../../../src/api/v1alpha1/index.js';
import type { ControllerEnvironment } from '../../../src/controller/controller-config.js';
import { isNotFound } from '../../../src/kube/index.js';
import { TestObjects } from '../support/objects.js';
import { until } from '../../../dev/wait/until.js';
import { AccessRequestResources } from './support/access-requests.js';
import { DelegationResources, querierDelegation } from './support/delegations.js';
import { useControllerFixture } from './support/harness.js';

// Garbage collection with a retention of 2 s on the real kube-apiserver: what is finished (a revoked
// delegation, a decided access request, a removed membership) is deleted once the retention has passed, as is
// a claimed Agent no delegation names; what is live, and an enrolled Agent, stay.

const env: ControllerEnvironment = { GARBAGE_COLLECTION_RETENTION: '2s' };
const fixture = useControllerFixture('garbage-collection', env);
const objects = new TestObjects();

async function gone(read: () => Promise<unknown>): Promise<boolean> {
  return read().then(
    () => false,
    (error: unknown) => {
      if (isNotFound(error)) return true;
      throw error;
    },
  );
}

function agentObject(agentId: string) {
  return {
    read: () => objects.get(AGENT_RESOURCE, agentName(agentId), fixture.aclNamespace),
    enrol: (ownerId: string) =>
      objects.create(
        AGENT_RESOURCE,
        {
          apiVersion: GROUP_VERSION,
          kind: AGENT_KIND,
          metadata: { name: agentName(agentId) },
          spec: { agentId, ownerId, enrolled: true },
        },
        fixture.aclNamespace,
      ),
  };
}

describe('garbage collection', () => {
  it('deletes a revoked delegation after the retention, then its unused Agent; an active one stays', async () => {
    const delegations = new DelegationResources(fixture.aclNamespace);
    const ownerId = randomUUID();
    const revoked = querierDelegation(`urn:dx:item:${randomUUID()}`, ownerId, {
      revokedAt: new Date().toISOString(),
    });
    const active = querierDelegation(`urn:dx:item:${randomUUID()}`, ownerId);
    await delegations.claimAgent(revoked.agentId, ownerId);
    await delegations.claimAgent(active.agentId, ownerId);
    const revokedName = await delegations.create(revoked);
    const activeName = await delegations.create(active);

    await until(async () => !(await delegations.exists(revokedName)), 'the revoked delegation collected');
    await until(() => gone(agentObject(revoked.agentId).read), 'its Agent collected');
    expect(await delegations.exists(activeName)).toBe(true);
    expect(await gone(agentObject(active.agentId).read)).toBe(false);
  });

  it('keeps an enrolled Agent that no delegation names', async () => {
    const agent = agentObject(`urn:dx:agent:${randomUUID()}`);
    await agent.enrol(randomUUID());
    const delegations = new DelegationResources(fixture.aclNamespace);
    // A claimed agent of the same age goes: once it has, the enrolled one has been judged too.
    const claimed = `urn:dx:agent:${randomUUID()}`;
    await delegations.claimAgent(claimed, randomUUID());
    await until(() => gone(agentObject(claimed).read), 'the claimed Agent collected');
    expect(await gone(agent.read)).toBe(false);
  });

  it('deletes a decided access request after the retention; a pending one stays', async () => {
    const requests = new AccessRequestResources(fixture.aclNamespace);
    const decided = (await requests.apply()).metadata.name ?? '';
    const pending = (await requests.apply()).metadata.name ?? '';
    await until(async () => (await requests.get(decided)).status?.state === 'PENDING', 'marked PENDING');
    await requests.writeStatus(decided, {
      state: 'REJECTED',
      decidedBy: randomUUID(),
      decidedAt: new Date().toISOString(),
    });
    await until(() => gone(() => requests.get(decided)), 'the decided request collected');
    expect(await gone(() => requests.get(pending))).toBe(false);
  });

  it('deletes a removed membership after the retention; a member stays', async () => {
    const { resources, aclNamespace } = fixture;
    const organisationId = randomUUID();
    const removedAt = new Date().toISOString();
    const removed = await resources.createMembership(aclNamespace, {
      organisationId,
      userId: randomUUID(),
      removedAt,
    });
    const member = await resources.createMembership(aclNamespace, { organisationId, userId: randomUUID() });
    await until(
      async () => !(await resources.membershipExists(aclNamespace, removed.name)),
      'the removed membership collected',
    );
    expect(await resources.membershipExists(aclNamespace, member.name)).toBe(true);
  });
});
