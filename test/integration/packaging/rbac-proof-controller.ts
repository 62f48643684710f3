import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { EnforcedReason, RELATIONSHIPS_FINALIZER } from '../../../src/api/v1alpha1/index.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import type { RunningController } from '../../../src/controller/start-controller.js';
import {
  enforcedCondition,
  exists,
  individual,
  makeStateDir,
  relationshipsOn,
  Resources,
  startOwnSpiceDB,
  startTestController,
  userCan,
  type OwnSpiceDB,
} from '../controller/support/harness.js';
import { createTestNamespace, testKubeConfig, uniqueId } from '../support/cluster.js';
import { projectDelegation } from '../../../src/controller/delegations/delegation-projection.js';
import { loadRegistry } from '../../../src/spicedb/registry.js';
import { DelegationResources, querierDelegation } from '../controller/support/delegations.js';
import { AccessRequestResources } from '../controller/support/access-requests.js';
import type { KubeCall, KubeTraffic } from './kube-traffic.js';
import {
  informerList,
  promptly,
  runSteps,
  CONTROLLER_WATCH_STEPS,
  controllerWatchSteps,
  type FlowOutcome,
  type RenderedComponent,
  type Step,
} from './rbac-proof-flow.js';

// The grant controller's main flow, for the RBAC proof: the controller runs in this process with a kubeconfig
// file of a chart ServiceAccount (through the relay), leader election on (its Lease in the release namespace, named as the chart
// names it), scoped by label to the run's objects, against a SpiceDB of the proof's own (its resync deletes
// every grant tuple no CR it sees explains). The admin arranges and inspects the cluster.

/** The steps of the controller's flow, by what they show. */
export const CONTROLLER_STEP = {
  leads: 'acquires its Lease and leads',
  synced: 'its caches sync',
  watches: CONTROLLER_WATCH_STEPS,
  renews: 'renews its Lease',
  catalog: [
    "projects a new CatalogItem's owners",
    "follows a change of the item's owner",
    "projects a second CatalogItem's owners",
  ],
  enforce: 'enforces a grant in the release namespace: finalizer, tuple, Enforced=True',
  member: 'projects a Membership: finalizer, member tuple, Enforced=True',
  delegation: 'projects a Delegation of its Agent’s owner: finalizer, delegated tuple, Enforced=True',
  accessRequest: 'marks an AccessRequest applied without a state PENDING',
  event: 'records an Event about it',
  revoke: 'withdraws the revoked grant: Enforced=False Revoked',
  delete: 'deleting the grant removes its tuples, then its finalizer',
  unbound: 'refuses a grant in a namespace bound to no organisation: NotAuthorized',
  collected: {
    delegation: 'collects a revoked Delegation after the retention',
    agent: 'collects the Agent that no Delegation names any more',
    membership: 'collects a removed Membership after the retention',
    accessRequest: 'collects a decided AccessRequest after the retention',
  },
  namespaces: [
    'binding the namespace to the organisation enforces the grant',
    'unbinding the namespace withdraws it',
    'binding it again enforces it',
  ],
};

/** Reading or creating the Lease: what leading needs. */
const leaseAcquisition = (call: KubeCall) =>
  call.resource === 'leases' && ['GET', 'POST'].includes(call.method);
/** Updating the Lease: what renewing needs. */
const leaseRenewal = (call: KubeCall) => call.resource === 'leases' && call.method === 'PUT';
/** Writing to an object of `resource`: its finalizer (a merge patch) or its status (an update). */
const writeTo = (resource: string) => (call: KubeCall) =>
  call.resource === resource && ['PUT', 'PATCH'].includes(call.method);
/** A grant's finalizer and Enforced condition. */
const grantUpdate = writeTo('policygrants');
/** A Membership's finalizer and Enforced condition. */
const membershipUpdate = writeTo('memberships');
/** A Delegation's finalizer and Enforced condition. */
const delegationUpdate = writeTo('delegations');
/** Writing an AccessRequest's status: its state. */
const accessRequestStatusUpdate = (call: KubeCall) =>
  call.resource === 'accessrequests' && call.method === 'PUT';
const eventCreation = (call: KubeCall) => call.resource === 'events' && call.method === 'POST';
/** Garbage collection's delete of an object of `resource`. */
const deletionOf = (resource: string) => (call: KubeCall) =>
  call.resource === resource && call.method === 'DELETE';
/** Finished objects go a second after they finished, so that the proof sees them collected. */
const GARBAGE_COLLECTION_RETENTION = '1s';

/** The proof's release namespace and SpiceDB, shared by every run of the controller's flow. */
export class ControllerProof {
  private constructor(
    readonly namespace: string,
    private readonly stateDir: string,
    private readonly spicedb: OwnSpiceDB,
  ) {}

  static async prepare(): Promise<ControllerProof> {
    const namespace = await createTestNamespace('rbac-proof-controller');
    const stateDir = await makeStateDir('rbac-proof-controller');
    return new ControllerProof(namespace, stateDir, await startOwnSpiceDB(stateDir, 'spicedb-rbac-proof'));
  }

  /** Starts the controller as the ServiceAccount `traffic` relays, with the chart's Lease name; runs its flow. */
  async run(traffic: KubeTraffic, { env }: RenderedComponent): Promise<FlowOutcome> {
    const leaseName = env.LEADER_ELECTION_ID;
    if (!leaseName) throw new Error('the chart sets no LEADER_ELECTION_ID for the controller');
    const scope = uniqueId('proof');
    const kubeconfigPath = join(this.stateDir, `${scope}.kubeconfig`);
    await traffic.writeKubeconfig(kubeconfigPath);
    const resources = new Resources(testKubeConfig(), scope);
    const controller = await startTestController({
      kubeconfigPath,
      spicedb: this.spicedb.server,
      aclNamespace: this.namespace,
      scope,
      logFile: join(this.stateDir, `${scope}.log`),
      env: {
        LEADER_ELECTION_ID: leaseName,
        LOG_LEVEL: 'info',
        GARBAGE_COLLECTION_RETENTION,
      },
    });
    try {
      const flow = new ControllerFlow(
        controller,
        traffic,
        resources,
        this.spicedb,
        this.namespace,
        leaseName,
      );
      return await runSteps(flow.steps());
    } finally {
      await controller.stop();
      await resources.cleanUp();
      await rm(kubeconfigPath, { force: true });
    }
  }

  async dispose(): Promise<void> {
    await this.spicedb.stop();
  }
}

interface Item {
  name: string;
  itemId: string;
  organisationId: string;
}

/** One run of the flow; its steps share what they created. */
class ControllerFlow {
  private readonly items: Item[] = [];
  private grantName = '';
  private gitOpsNamespace = '';
  private gitOpsGrant = '';
  /** The Agent the collected Delegation leaves without a delegation, for the next step. */
  private collectedAgent: { delegations: DelegationResources; agentId: string } | undefined;

  constructor(
    private readonly controller: RunningController,
    private readonly traffic: KubeTraffic,
    private readonly resources: Resources,
    private readonly spicedb: OwnSpiceDB,
    private readonly namespace: string,
    private readonly leaseName: string,
  ) {}

  steps(): Step[] {
    const [newItem, ownerChange, secondItem] = CONTROLLER_STEP.catalog as [string, string, string];
    return [
      { name: CONTROLLER_STEP.leads, run: () => this.leads() },
      { name: CONTROLLER_STEP.synced, run: () => this.syncs() },
      ...controllerWatchSteps(this.traffic),
      { name: CONTROLLER_STEP.renews, run: () => this.renews() },
      { name: newItem, run: () => this.projectsNewItem() },
      { name: ownerChange, run: () => this.followsOwnerChange() },
      { name: secondItem, run: () => this.projectsNewItem() },
      { name: CONTROLLER_STEP.enforce, run: () => this.enforces() },
      { name: CONTROLLER_STEP.member, run: () => this.projectsMember() },
      { name: CONTROLLER_STEP.delegation, run: () => this.projectsDelegation() },
      { name: CONTROLLER_STEP.accessRequest, run: () => this.marksAccessRequestPending() },
      { name: CONTROLLER_STEP.event, run: () => this.recordsEvent() },
      { name: CONTROLLER_STEP.revoke, run: () => this.withdrawsRevoked() },
      { name: CONTROLLER_STEP.delete, run: () => this.releasesDeleted() },
      { name: CONTROLLER_STEP.unbound, run: () => this.refusesUnbound() },
      { name: CONTROLLER_STEP.collected.delegation, run: () => this.collectsDelegation() },
      { name: CONTROLLER_STEP.collected.agent, run: () => this.collectsAgent() },
      { name: CONTROLLER_STEP.collected.membership, run: () => this.collectsMembership() },
      { name: CONTROLLER_STEP.collected.accessRequest, run: () => this.collectsAccessRequest() },
      ...CONTROLLER_STEP.namespaces.map((name, index) => ({
        name,
        run: () => this.followsBinding(index % 2 === 0),
      })),
    ];
  }

  private async leads(): Promise<void> {
    await promptly(async () => {
      expect(this.controller.isLeader(), 'leading').toBe(true);
      expect((await this.lease()).spec?.holderIdentity).toBe(this.controller.identity);
    }, this.unlessRefused(leaseAcquisition));
  }

  private async syncs(): Promise<void> {
    await promptly(
      () => expect(this.controller.hasSynced(), 'synced').toBe(true),
      this.unlessRefused(informerList),
    );
  }

  private async renews(): Promise<void> {
    const renewedAt = async () => String((await this.lease()).spec?.renewTime);
    const first = await renewedAt();
    await promptly(async () => expect(await renewedAt()).not.toBe(first), this.unlessRefused(leaseRenewal));
  }

  private unlessRefused(calls: (call: KubeCall) => boolean) {
    return { unlessRefused: { traffic: this.traffic, calls } };
  }

  private async projectsNewItem(): Promise<void> {
    const { name, spec } = await this.resources.createItem();
    const item = { name, itemId: spec.itemId, organisationId: spec.organisationId };
    this.items.push(item);
    await this.expectOwners(item, spec.ownerId);
  }

  private async followsOwnerChange(): Promise<void> {
    const item = this.items[0] as Item;
    const ownerId = randomUUID();
    await this.resources.updateItemSpec(item.name, { ownerId });
    await this.expectOwners(item, ownerId);
  }

  private async expectOwners(item: Item, ownerId: string): Promise<void> {
    await promptly(async () => {
      const owners = (await relationshipsOn(this.spicedb.client, item.itemId))
        .filter((relationship) => relationship.relation === 'owner')
        .map((relationship) => relationship.subject.id)
        .sort();
      expect(owners).toEqual([item.organisationId, ownerId].sort());
    });
  }

  private async enforces(): Promise<void> {
    const itemId = (this.items[0] as Item).itemId;
    const spec = individual(itemId);
    this.grantName = (await this.resources.createGrant(this.namespace, spec)).name;
    const grant = await promptly(async () => {
      const current = await this.resources.getGrant(this.namespace, this.grantName);
      expect(enforcedCondition(current)?.reason).toBe(EnforcedReason.Projected);
      return current;
    }, this.unlessRefused(grantUpdate));
    expect(grant.metadata.finalizers).toContain(RELATIONSHIPS_FINALIZER);
    expect(await userCan(this.spicedb.client, itemId, 'api_consumer', spec.userId, grant)).toBe(true);
  }

  private async projectsMember(): Promise<void> {
    const organisationId = (this.items[0] as Item).organisationId;
    const userId = randomUUID();
    const { name } = await this.resources.createMembership(this.namespace, { organisationId, userId });
    const membership = await promptly(async () => {
      const current = await this.resources.getMembership(this.namespace, name);
      expect(enforcedCondition(current)?.reason).toBe(EnforcedReason.Projected);
      return current;
    }, this.unlessRefused(membershipUpdate));
    expect(membership.metadata.finalizers).toContain(RELATIONSHIPS_FINALIZER);
    const { allowed } = await this.spicedb.client.checkPermission({
      resource: { type: 'organization', id: encodeObjectId(organisationId) },
      permission: 'member',
      subject: { type: 'user', id: encodeObjectId(userId) },
      consistency: { fullyConsistent: true },
    });
    expect(allowed, 'the member tuple').toBe(true);
  }

  private async projectsDelegation(): Promise<void> {
    const ownerId = randomUUID();
    const spec = querierDelegation((this.items[0] as Item).itemId, ownerId);
    const delegations = new DelegationResources(this.namespace);
    await delegations.claimAgent(spec.agentId, ownerId);
    const name = await delegations.create(spec);
    const delegation = await promptly(async () => {
      const current = await delegations.get(name);
      expect(enforcedCondition(current)?.reason).toBe(EnforcedReason.Projected);
      return current;
    }, this.unlessRefused(delegationUpdate));
    expect(delegation.metadata.finalizers).toContain(RELATIONSHIPS_FINALIZER);
    const [delegated] = projectDelegation(spec, loadRegistry());
    const { allowed } = await this.spicedb.client.checkPermission({
      resource: delegated?.resource ?? { type: '', id: '' },
      permission: delegated?.relation ?? '',
      subject: { type: 'agent', id: encodeObjectId(spec.agentId) },
      consistency: { fullyConsistent: true },
    });
    expect(allowed, 'the delegated tuple').toBe(true);
  }

  private async marksAccessRequestPending(): Promise<void> {
    const requests = new AccessRequestResources(this.namespace);
    const { metadata } = await requests.apply((this.items[0] as Item).itemId);
    await promptly(async () => {
      expect((await requests.get(metadata.name ?? '')).status?.state).toBe('PENDING');
    }, this.unlessRefused(accessRequestStatusUpdate));
  }

  private async recordsEvent(): Promise<void> {
    await promptly(async () => {
      const events = await this.resources.listEvents(this.namespace);
      const about = events.filter((event) => event.regarding?.name === this.grantName);
      expect(about.map((event) => event.reason)).toContain(EnforcedReason.Projected);
    }, this.unlessRefused(eventCreation));
  }

  private async withdrawsRevoked(): Promise<void> {
    const itemId = (this.items[0] as Item).itemId;
    await this.resources.revoke(this.namespace, this.grantName);
    const grant = await this.resources.waitForReason(this.namespace, this.grantName, EnforcedReason.Revoked);
    const userId = grant.spec.userId as string;
    expect(await userCan(this.spicedb.client, itemId, 'api_consumer', userId, grant)).toBe(false);
  }

  private async releasesDeleted(): Promise<void> {
    await this.resources.deleteGrant(this.namespace, this.grantName);
    await promptly(async () =>
      expect(await this.resources.grantExists(this.namespace, this.grantName)).toBe(false),
    );
  }

  private async collectsDelegation(): Promise<void> {
    const ownerId = randomUUID();
    const spec = querierDelegation((this.items[0] as Item).itemId, ownerId);
    const delegations = new DelegationResources(this.namespace);
    await delegations.claimAgent(spec.agentId, ownerId);
    const name = await delegations.create(spec);
    await delegations.waitForReason(name, EnforcedReason.Projected);
    this.collectedAgent = { delegations, agentId: spec.agentId };
    await delegations.revoke(name);
    await promptly(
      async () => expect(await delegations.exists(name), 'the revoked Delegation').toBe(false),
      this.unlessRefused(deletionOf('delegations')),
    );
  }

  private async collectsAgent(): Promise<void> {
    const { delegations, agentId } = this.collectedAgent ?? {};
    if (!delegations || agentId === undefined)
      throw new Error('no Agent was left by the collected Delegation');
    await promptly(
      async () => expect(await delegations.agentExists(agentId), 'the unused Agent').toBe(false),
      this.unlessRefused(deletionOf('agents')),
    );
  }

  private async collectsMembership(): Promise<void> {
    const organisationId = (this.items[0] as Item).organisationId;
    const { name } = await this.resources.createMembership(this.namespace, {
      organisationId,
      userId: randomUUID(),
    });
    await this.resources.waitForMembershipReason(this.namespace, name, EnforcedReason.Projected);
    await this.resources.removeMembership(this.namespace, name);
    await promptly(
      async () =>
        expect(await this.resources.membershipExists(this.namespace, name), 'the removed Membership').toBe(
          false,
        ),
      this.unlessRefused(deletionOf('memberships')),
    );
  }

  private async collectsAccessRequest(): Promise<void> {
    const requests = new AccessRequestResources(this.namespace);
    const { metadata } = await requests.apply((this.items[0] as Item).itemId);
    const name = metadata.name ?? '';
    await promptly(async () => expect((await requests.get(name)).status?.state).toBe('PENDING'));
    const { status } = await requests.get(name);
    await requests.writeStatus(name, { ...status, state: 'REJECTED', decidedAt: new Date().toISOString() });
    await promptly(
      async () => expect(await exists(requests.get(name)), 'the decided AccessRequest').toBe(false),
      this.unlessRefused(deletionOf('accessrequests')),
    );
  }

  private async refusesUnbound(): Promise<void> {
    const item = this.items[1] as Item;
    this.gitOpsNamespace = await this.resources.namespace('rbac-proof-gitops');
    this.gitOpsGrant = (await this.resources.createGrant(this.gitOpsNamespace, individual(item.itemId))).name;
    await this.resources.waitForReason(this.gitOpsNamespace, this.gitOpsGrant, EnforcedReason.NotAuthorized);
  }

  private async followsBinding(bound: boolean): Promise<void> {
    const item = this.items[1] as Item;
    await this.resources.labelNamespace(this.gitOpsNamespace, {
      [ORGANISATION_LABEL]: bound ? item.organisationId : null,
    });
    const reason = bound ? EnforcedReason.Projected : EnforcedReason.NotAuthorized;
    await this.resources.waitForReason(this.gitOpsNamespace, this.gitOpsGrant, reason);
  }

  private lease(): Promise<V1Lease> {
    return testKubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: this.leaseName, namespace: this.namespace });
  }
}
