import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi, KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'vitest';
import {
  API_GROUP,
  API_VERSION,
  GRANT_CLAIM_PLURAL,
  GROUP_VERSION,
  MEMBERSHIP_PLURAL,
  membershipName,
  POLICY_GRANT_KIND,
  POLICY_GRANT_PLURAL,
  type GrantClaim,
  type Membership,
  type MembershipKey,
  type PolicyGrant,
} from '../../../src/api/v1alpha1/index.js';
import { claimName, type ClaimKey } from '../../../src/acl/policies/grant-claims.js';
import { ensureDevSigningKey, type DevSigningKey } from '../../../dev/tokens/dev-signing-key.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER, mintToken } from '../../../dev/tokens/dev-token.js';
import type { AclApiConfig } from '../../../src/acl/acl-config.js';
import { startAclApi, type RunningAclApi } from '../../../src/acl/acl-server.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { individual, Resources } from '../controller/support/harness.js';
import { createTestNamespace, testKubeConfig, uniqueId } from '../support/cluster.js';
import { EVENT_BATCH, memberEvent, type MemberEvent } from '../../support/member-events.js';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { testAuditConfig } from '../support/database.js';
import type { KubeCall, KubeTraffic } from './kube-traffic.js';
import {
  informerList,
  promptly,
  runSteps,
  WATCH_STEPS,
  watchStepName,
  watchSteps,
  type FlowOutcome,
  type Step,
} from './rbac-proof-flow.js';

// The ACL API's main flow over HTTP, for the RBAC proof: the API runs in this process with the KubeConfig it is
// given (a chart ServiceAccount's, through the relay), writing into the proof's namespace (the release
// namespace); the cluster is arranged and inspected with the admin's KubeConfig.

/** The decision Service the API follows (DECISION_SERVICE), and the resource its endpoints are read from. */
const DECISION_SERVICE = 'pgo-policy-grant-operator-decision-service';
const ENDPOINT_SLICES = 'endpointslices';

const CATALOG_STEPS = [1, 2, 3].map((n) => `judges requests on a new CatalogItem (${n} of 3)`);
const NAMESPACE_STEPS = [
  'binding the namespace to the organisation makes the grant count',
  'unbinding the namespace withdraws it',
  'binding it again restores it',
];

/**
 * Concurrent events on one new membership: some creates meet the first one's object and must re-read it. Fewer
 * than the store's write attempts (MAX_WRITE_ATTEMPTS), so that each of them lands.
 */
const RACING_EVENTS = 6;

/** The steps of the ACL API's flow, by what they show. */
export const ACL_STEP = {
  ready: 'becomes ready (every cache listed)',
  watches: WATCH_STEPS,
  replicas: 'follows the decision Service’s Ready endpoints (its EndpointSlices)',
  replicasWatch: watchStepName(ENDPOINT_SLICES),
  catalog: CATALOG_STEPS,
  create: 'create: 201, listed for the consumer and the provider (read-your-write)',
  verify: 'verify: the consumer has the active policy',
  revoke: 'revoke: 200, its claims released, listed as DELETED (read-your-write)',
  recreate: 're-create: 201, listed (read-your-write)',
  takeover: 'create takes over the claim of a grant revoked outside the API',
  unclaimed: 'a grant whose claim is missing (an upgrade) blocks a duplicate and gets its claim back',
  idempotent: 'an Idempotency-Key retry answers the first answer',
  conflict: 'a 409 releases the claims the request took',
  rollback: 'a create the API server refuses is rolled back',
  unbound: 'a grant applied in a namespace bound to no organisation does not count',
  memberAdded: 'a membership event adds the member: its Membership is created',
  memberRemoved: 'a removal event updates the Membership',
  memberRace: 'events racing on one new membership all apply',
  delegate: 'delegate: 201, the caller owns the agent, listed (read-your-write)',
  delegationConflict: 'another user delegating the agent: 409',
  delegationRevoke: 'revoke a delegation: 204, listed as DELETED (read-your-write)',
  agentEnrol: 'cos_admin enrols the agent to another user: 200',
  agentDelete: 'cos_admin deletes the agent: 204',
  accessRequest: 'ask for access: 201, PENDING (read-your-write)',
  accessApproval: 'approve the access request with its ETag: 200, its policy created',
  namespaces: NAMESPACE_STEPS,
};

interface Caller {
  id: string;
  authorization: string;
}

interface Answer {
  status: number;
  body: {
    detail?: string;
    results?: {
      policyId?: string;
      id?: string;
      status?: string;
      outcome?: string;
      delegationId?: string;
      requestId?: string;
      etag?: string;
      policyIds?: string[];
    }[];
  };
}

/** The proof's namespace, signing key and admission policy, shared by every run of the ACL API's flow. */
export class AclProof {
  private constructor(
    readonly namespace: string,
    private readonly tempDir: string,
    private readonly key: DevSigningKey,
    private readonly resources: Resources,
    /** Grants to this user are refused by an admission policy: a write failure the API must roll back. */
    private readonly refusedUserId: string,
    private readonly refusal: KubernetesObject[],
  ) {}

  static async prepare(): Promise<AclProof> {
    const namespace = await createTestNamespace('rbac-proof-acl');
    const tempDir = await mkdtemp(join(tmpdir(), 'rbac-proof-acl-'));
    const key = await ensureDevSigningKey(tempDir);
    const refusedUserId = randomUUID();
    const refusal = await refuseGrantsTo(refusedUserId, namespace);
    const resources = new Resources(testKubeConfig(), uniqueId('rbac-proof-acl'));
    return new AclProof(namespace, tempDir, key, resources, refusedUserId, refusal);
  }

  /** Starts the ACL API as the ServiceAccount that `traffic` relays, runs its flow, and stops it. */
  async run(traffic: KubeTraffic): Promise<FlowOutcome> {
    const api = await startAclApi(await this.config(), {
      validateResponses: true,
      kubeConfig: traffic.kubeConfig,
    });
    try {
      const flow = new AclFlow(
        api,
        traffic,
        this.resources,
        this.namespace,
        this.refusedUserId,
        await this.callers(),
      );
      return await runSteps(flow.steps());
    } finally {
      await api.stop();
    }
  }

  async dispose(): Promise<void> {
    await this.resources.cleanUp();
    const objects = testKubeConfig().makeApiClient(KubernetesObjectApi);
    for (const object of [...this.refusal].reverse()) await objects.delete(object).catch(() => undefined);
    await rm(this.tempDir, { recursive: true, force: true });
  }

  private async config(): Promise<AclApiConfig> {
    return {
      port: 0,
      host: '127.0.0.1',
      basePath: '/v2',
      namespace: this.namespace,
      errorNamespace: 'dx',
      logLevel: process.env.ACL_TEST_LOG_LEVEL ?? 'silent',
      auth: {
        jwks: { file: this.key.jwksPath },
        issuer: DEV_TOKEN_ISSUER,
        audience: DEV_TOKEN_AUDIENCE,
        algorithms: ['ES256'],
      },
      readYourWriteTimeoutMs: POLL_TIMEOUT_MS,
      startupSyncTimeoutMs: 1_000,
      kubeTimeoutMs: POLL_TIMEOUT_MS,
      closeGraceMs: 500,
      audit: await testAuditConfig('rbac'),
      decisionReplicas: { kind: 'service', name: DECISION_SERVICE, portName: 'http' },
    };
  }

  private async callers(): Promise<Callers> {
    const organisationId = randomUUID();
    const user = async (org?: string, roles: string[] = []): Promise<Caller> => {
      const id = randomUUID();
      const token = await mintToken(this.key, { sub: id, roles, ...(org ? { org } : {}) });
      return { id, authorization: `Bearer ${token}` };
    };
    return {
      organisationId,
      owner: await user(organisationId),
      stranger: await user(),
      consumer: await user(),
      retried: await user(),
      rolledBack: await user(),
      gitOps: await user(),
      admin: await user(undefined, ['cos_admin']),
      producer: {
        id: 'producer',
        authorization: `Bearer ${await mintToken(this.key, { sub: randomUUID(), roles: ['platform_event_producer'] })}`,
      },
    };
  }
}

interface Callers {
  organisationId: string;
  /** Owns every CatalogItem of the run, and issues the grants. */
  owner: Caller;
  /** Owns nothing. */
  stranger: Caller;
  consumer: Caller;
  retried: Caller;
  rolledBack: Caller;
  gitOps: Caller;
  /** Role cos_admin: enrols and deletes agents. */
  admin: Caller;
  /** Sends membership events of any organisation (role platform_event_producer). */
  producer: Caller;
}

/** One run of the flow; its steps share what they created. */
class AclFlow {
  private readonly itemIds: string[] = [];
  private policyId = '';
  private gitOpsNamespace = '';
  private member?: MembershipKey;
  private readonly agentId = `urn:dx:agent:${randomUUID()}`;
  private delegationId = '';
  private accessRequestId = '';

  constructor(
    private readonly api: RunningAclApi,
    private readonly traffic: KubeTraffic,
    private readonly resources: Resources,
    private readonly namespace: string,
    private readonly refusedUserId: string,
    private readonly callers: Callers,
  ) {}

  steps(): Step[] {
    return [
      { name: ACL_STEP.ready, run: () => this.becomesReady() },
      ...watchSteps(this.traffic),
      { name: ACL_STEP.replicas, run: () => this.followsDecisionReplicas() },
      ...watchSteps(this.traffic, [ENDPOINT_SLICES]),
      ...ACL_STEP.catalog.map((name) => ({ name, run: () => this.judgesOnNewItem() })),
      { name: ACL_STEP.create, run: () => this.create() },
      { name: ACL_STEP.verify, run: () => this.verify() },
      { name: ACL_STEP.revoke, run: () => this.revoke() },
      { name: ACL_STEP.recreate, run: () => this.recreate() },
      { name: ACL_STEP.takeover, run: () => this.takeOver() },
      { name: ACL_STEP.unclaimed, run: () => this.unclaimedGrantBlocks() },
      { name: ACL_STEP.idempotent, run: () => this.retryIdempotently() },
      { name: ACL_STEP.conflict, run: () => this.conflictReleasesClaims() },
      { name: ACL_STEP.rollback, run: () => this.refusedWriteRollsBack() },
      { name: ACL_STEP.unbound, run: () => this.unboundNamespaceDoesNotCount() },
      { name: ACL_STEP.memberAdded, run: () => this.memberAdded() },
      { name: ACL_STEP.memberRemoved, run: () => this.memberRemoved() },
      { name: ACL_STEP.memberRace, run: () => this.eventsRace() },
      { name: ACL_STEP.delegate, run: () => this.delegate() },
      { name: ACL_STEP.delegationConflict, run: () => this.delegateAnothersAgent() },
      { name: ACL_STEP.delegationRevoke, run: () => this.revokeDelegation() },
      { name: ACL_STEP.agentEnrol, run: () => this.enrolAgent() },
      { name: ACL_STEP.agentDelete, run: () => this.deleteAgent() },
      { name: ACL_STEP.accessRequest, run: () => this.askForAccess() },
      { name: ACL_STEP.accessApproval, run: () => this.approveAccess() },
      ...ACL_STEP.namespaces.map((name, index) => ({
        name,
        run: () => this.bindNamespace(index % 2 === 0),
      })),
    ];
  }

  private get firstItem(): string {
    return this.itemIds[0] as string;
  }

  private async becomesReady(): Promise<void> {
    await promptly(
      async () => {
        expect((await fetch(`${this.api.rootUrl}/healthz/ready`)).status).toBe(200);
      },
      { unlessRefused: { traffic: this.traffic, calls: informerList } },
    );
  }

  /** A Ready endpoint of the decision Service, added once the API listed them, is a replica it asks. */
  private async followsDecisionReplicas(): Promise<void> {
    const address = `10.${Math.floor(Math.random() * 250)}.0.1`;
    await testKubeConfig()
      .makeApiClient(KubernetesObjectApi)
      .create({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: uniqueId('decision'),
          namespace: this.namespace,
          labels: { 'kubernetes.io/service-name': DECISION_SERVICE },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: [address], conditions: { ready: true } }],
        ports: [{ name: 'http', port: 8081, protocol: 'TCP' }],
      } as KubernetesObject);
    const slices = (call: KubeCall) => call.resource === ENDPOINT_SLICES;
    await promptly(() => expect(this.api.decisionReplicas?.ready()).toContain(`http://${address}:8081`), {
      unlessRefused: { traffic: this.traffic, calls: slices },
    });
  }

  /** A request by someone who does not own the item is refused (403) once the item is known, not 404. */
  private async judgesOnNewItem(): Promise<void> {
    const { owner, organisationId, stranger } = this.callers;
    const item = await this.resources.createItem({ ownerId: owner.id, organisationId });
    this.itemIds.push(item.spec.itemId);
    await promptly(async () => {
      const answer = await this.createPolicy(stranger, [grantTo(item.spec.itemId, randomUUID())]);
      expect(answer.status, describe(answer)).toBe(403);
    });
  }

  private async create(): Promise<void> {
    const { owner, consumer } = this.callers;
    this.policyId = await this.created(
      await this.createPolicy(owner, [grantTo(this.firstItem, consumer.id)]),
    );
    expect(await this.rowStatus(consumer, 'consumer', this.policyId)).toBe('ACTIVE');
    expect(await this.rowStatus(owner, 'provider', this.policyId)).toBe('ACTIVE');
  }

  private async verify(): Promise<void> {
    const { consumer } = this.callers;
    const answer = await this.verifyAccess(consumer, this.firstItem);
    expect(answer.status, describe(answer)).toBe(200);
    expect(answer.body.results?.map((result) => result.id)).toEqual([this.policyId]);
  }

  private async revoke(): Promise<void> {
    const { owner, consumer } = this.callers;
    const answer = await this.request('DELETE', `/policy?id=${this.policyId}`, owner);
    expect(answer.status, describe(answer)).toBe(200);
    expect(await this.rowStatus(consumer, 'consumer', this.policyId)).toBe('DELETED');
    expect(await this.claimHolder(consumer.id, this.firstItem), 'claim left behind').toBeUndefined();
  }

  private async recreate(): Promise<void> {
    const { owner, consumer } = this.callers;
    this.policyId = await this.created(
      await this.createPolicy(owner, [grantTo(this.firstItem, consumer.id)]),
    );
    expect(await this.rowStatus(consumer, 'consumer', this.policyId)).toBe('ACTIVE');
  }

  /** kubectl sets revokedAt: the claim still names that grant, and the next create takes it over. */
  private async takeOver(): Promise<void> {
    const { owner, consumer } = this.callers;
    const revokedElsewhere = await this.grantWithUid(this.policyId);
    await this.resources.revoke(this.namespace, revokedElsewhere);
    expect(await this.claimHolder(consumer.id, this.firstItem)).toBe(revokedElsewhere);
    this.policyId = await this.created(
      await this.createPolicy(owner, [grantTo(this.firstItem, consumer.id)]),
    );
    expect(await this.claimHolder(consumer.id, this.firstItem)).toBe(await this.grantWithUid(this.policyId));
  }

  /** Claims were ConfigMaps before GrantClaims: after an upgrade an active grant may have none. */
  private async unclaimedGrantBlocks(): Promise<void> {
    const { owner, consumer } = this.callers;
    const holder = await this.grantWithUid(this.policyId);
    await this.claims().deleteNamespacedCustomObject({
      ...this.claimPath(),
      name: claimName(this.apiClaimKey(consumer.id, this.firstItem)),
    });
    const duplicate = await this.createPolicy(owner, [grantTo(this.firstItem, consumer.id)]);
    expect(duplicate.status, describe(duplicate)).toBe(409);
    expect(await this.claimHolder(consumer.id, this.firstItem)).toBe(holder);
  }

  private async retryIdempotently(): Promise<void> {
    const { owner, retried } = this.callers;
    const headers = { 'idempotency-key': `key-${randomUUID()}` };
    const request = [grantTo(this.firstItem, retried.id)];
    const first = await this.createPolicy(owner, request, headers);
    expect(first.status, describe(first)).toBe(201);
    const retry = await this.createPolicy(owner, request, headers);
    expect(retry.status, describe(retry)).toBe(201);
    expect(retry.body.results).toEqual(first.body.results);
  }

  /** The consumer holds api: asking for api and file is a 409, which must not keep the claim on file. */
  private async conflictReleasesClaims(): Promise<void> {
    const { owner, consumer } = this.callers;
    const both = await this.createPolicy(owner, [grantTo(this.firstItem, consumer.id, ['api', 'file'])]);
    expect(both.status, describe(both)).toBe(409);
    await this.created(await this.createPolicy(owner, [grantTo(this.firstItem, consumer.id, ['file'])]));
  }

  /** The second grant is refused by the admission policy: the first, already created, must go again. */
  private async refusedWriteRollsBack(): Promise<void> {
    const { owner, rolledBack } = this.callers;
    const request = [grantTo(this.firstItem, rolledBack.id), grantTo(this.firstItem, this.refusedUserId)];
    const answer = await this.createPolicy(owner, request);
    expect(answer.status, describe(answer)).toBe(400);
    const grants = await this.grantsInNamespace();
    expect(
      grants.filter((grant) => grant.spec.userId === rolledBack.id),
      'grant left behind',
    ).toEqual([]);
    expect(await this.claimHolder(rolledBack.id, this.firstItem), 'claim left behind').toBeUndefined();
  }

  /** As kubectl would apply it; the API sees it (listing) but must not count it for verify. */
  private async unboundNamespaceDoesNotCount(): Promise<void> {
    const { gitOps } = this.callers;
    this.gitOpsNamespace = await this.resources.namespace('rbac-proof-gitops');
    const spec = individual(this.itemIds[1] as string, ['api'], { userId: gitOps.id });
    const { name } = await this.resources.createGrant(this.gitOpsNamespace, spec);
    const uid = (await this.resources.getGrant(this.gitOpsNamespace, name)).metadata.uid as string;
    await promptly(async () => expect(await this.rowStatus(gitOps, 'consumer', uid)).toBe('ACTIVE'));
    const answer = await this.verifyAccess(gitOps, this.itemIds[1] as string);
    expect(answer.status, describe(answer)).toBe(403);
  }

  private async memberAdded(): Promise<void> {
    this.member = { organisationId: this.callers.organisationId, userId: randomUUID() };
    await this.sendEvents([memberEvent('added', this.member)]);
    expect((await this.membership(this.member)).spec.removedAt).toBeUndefined();
  }

  private async memberRemoved(): Promise<void> {
    await this.sendEvents([memberEvent('removed', this.member as MembershipKey)]);
    expect((await this.membership(this.member as MembershipKey)).spec.removedAt).toBeDefined();
  }

  /**
   * Every request starts from the cache, where the membership is not yet: all but one create is refused as
   * existing, and those re-read the object (a list narrowed to its name) and replace it.
   */
  private async eventsRace(): Promise<void> {
    const key = { organisationId: this.callers.organisationId, userId: randomUUID() };
    // One time for all: an event is stale only when older than the one applied last.
    const time = new Date().toISOString();
    const racing = Array.from({ length: RACING_EVENTS }, () =>
      this.sendEvents([memberEvent('added', key, time)]),
    );
    await Promise.all(racing);
    expect((await this.membership(key)).spec.appliedEvents).toHaveLength(RACING_EVENTS);
  }

  private async sendEvents(events: MemberEvent[]): Promise<void> {
    const answer = await this.request('POST', '/events', this.callers.producer, events, {
      'content-type': EVENT_BATCH,
    });
    expect(answer.status, describe(answer)).toBe(200);
    expect(answer.body.results?.map((result) => result.outcome)).toEqual(events.map(() => 'applied'));
  }

  private async membership(key: MembershipKey): Promise<Membership> {
    return (await testKubeConfig()
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: this.namespace,
        plural: MEMBERSHIP_PLURAL,
        name: membershipName(key),
      })) as Membership;
  }

  private async bindNamespace(bound: boolean): Promise<void> {
    const { gitOps, organisationId } = this.callers;
    await this.resources.labelNamespace(this.gitOpsNamespace, {
      [ORGANISATION_LABEL]: bound ? organisationId : null,
    });
    await promptly(async () => {
      const answer = await this.verifyAccess(gitOps, this.itemIds[1] as string);
      expect(answer.status, describe(answer)).toBe(bound ? 200 : 403);
    });
  }

  private delegateAgent(caller: Caller) {
    return this.request('POST', '/delegations', caller, {
      agentId: this.agentId,
      itemId: this.firstItem,
      relation: 'viewer',
      expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
    });
  }

  private async delegate(): Promise<void> {
    const { consumer } = this.callers;
    const answer = await this.delegateAgent(consumer);
    expect(answer.status, describe(answer)).toBe(201);
    this.delegationId = answer.body.results?.[0]?.delegationId ?? '';
    expect(await this.delegationStatus()).toBe('ACTIVE');
  }

  private async delegateAnothersAgent(): Promise<void> {
    const answer = await this.delegateAgent(this.callers.stranger);
    expect(answer.status, describe(answer)).toBe(409);
  }

  private async revokeDelegation(): Promise<void> {
    const { consumer } = this.callers;
    const answer = await this.request('DELETE', `/delegations/${this.delegationId}`, consumer);
    expect(answer.status, describe(answer)).toBe(204);
    expect(await this.delegationStatus()).toBe('DELETED');
  }

  private async enrolAgent(): Promise<void> {
    const { admin, stranger } = this.callers;
    const path = `/agents/${encodeURIComponent(this.agentId)}`;
    const answer = await this.request('PUT', path, admin, { ownerId: stranger.id });
    expect(answer.status, describe(answer)).toBe(200);
  }

  private async deleteAgent(): Promise<void> {
    const answer = await this.request(
      'DELETE',
      `/agents/${encodeURIComponent(this.agentId)}`,
      this.callers.admin,
    );
    expect(answer.status, describe(answer)).toBe(204);
  }

  private async delegationStatus(): Promise<string | undefined> {
    const answer = await this.request('GET', `/delegations/${this.delegationId}`, this.callers.consumer);
    expect(answer.status, describe(answer)).toBe(200);
    return answer.body.results?.[0]?.status;
  }

  private async askForAccess(): Promise<void> {
    const { stranger } = this.callers;
    const answer = await this.request('POST', '/access-requests', stranger, {
      itemId: this.firstItem,
      itemType: 'DATABANK',
      access: [{ accessType: 'file' }],
      expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(answer.status, describe(answer)).toBe(201);
    this.accessRequestId = answer.body.results?.[0]?.requestId ?? '';
    expect((await this.accessRequestRow()).status).toBe('PENDING');
  }

  private async approveAccess(): Promise<void> {
    const { etag = '' } = await this.accessRequestRow();
    const answer = await this.request(
      'PATCH',
      `/access-requests/${this.accessRequestId}`,
      this.callers.owner,
      { status: 'APPROVED' },
      { 'if-match': etag },
    );
    expect(answer.status, describe(answer)).toBe(200);
    expect(answer.body.results?.[0]?.policyIds).toHaveLength(1);
  }

  private async accessRequestRow() {
    const answer = await this.request(
      'GET',
      `/access-requests/${this.accessRequestId}`,
      this.callers.stranger,
    );
    expect(answer.status, describe(answer)).toBe(200);
    return answer.body.results?.[0] ?? {};
  }

  private async created(answer: Answer): Promise<string> {
    expect(answer.status, describe(answer)).toBe(201);
    return answer.body.results?.[0]?.policyId as string;
  }

  private createPolicy(caller: Caller, request: unknown[], headers: Record<string, string> = {}) {
    return this.request('POST', '/policy', caller, { request }, headers);
  }

  private verifyAccess(caller: Caller, itemId: string) {
    return this.request('POST', '/verify', caller, { user: { id: caller.id }, item: { itemId } });
  }

  /** The policy's status in the caller's listing, or `absent`. */
  private async rowStatus(caller: Caller, view: 'consumer' | 'provider', policyId: string) {
    const answer = await this.request('GET', `/policy/${view}?limit=1000`, caller);
    expect(answer.status, describe(answer)).toBe(200);
    return answer.body.results?.find((row) => row.policyId === policyId)?.status ?? 'absent';
  }

  private async request(
    method: string,
    path: string,
    caller: Caller,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const response = await fetch(`${this.api.url}${path}`, {
      method,
      headers: {
        authorization: caller.authorization,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // A 204 has no body.
    const text = await response.text();
    return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as Answer['body'] };
  }

  private async grantsInNamespace(): Promise<PolicyGrant[]> {
    const list = (await testKubeConfig().makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: this.namespace,
      plural: POLICY_GRANT_PLURAL,
    })) as { items: PolicyGrant[] };
    return list.items;
  }

  private async grantWithUid(uid: string): Promise<string> {
    const grant = (await this.grantsInNamespace()).find((candidate) => candidate.metadata.uid === uid);
    if (!grant) throw new Error(`no grant has uid ${uid}`);
    return grant.metadata.name as string;
  }

  /** The grant named by the consumer's claim on the item's api access, or undefined without a claim. */
  private async claimHolder(userId: string, itemId: string): Promise<string | undefined> {
    try {
      const claim = (await this.claims().getNamespacedCustomObject({
        ...this.claimPath(),
        name: claimName(this.apiClaimKey(userId, itemId)),
      })) as GrantClaim;
      return claim.spec.grantName;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    }
  }

  private apiClaimKey(userId: string, itemId: string): ClaimKey {
    return { subject: `user:${userId}`, itemId, accessType: 'api' };
  }

  private claims(): CustomObjectsApi {
    return testKubeConfig().makeApiClient(CustomObjectsApi);
  }

  private claimPath() {
    return { group: API_GROUP, version: API_VERSION, namespace: this.namespace, plural: GRANT_CLAIM_PLURAL };
  }
}

function grantTo(itemId: string, userId: string, accessTypes = ['api']) {
  return individual(itemId, accessTypes, { userId });
}

function describe(answer: Answer): string {
  return `HTTP ${answer.status}: ${answer.body.detail ?? ''}`;
}

/**
 * A ValidatingAdmissionPolicy that refuses PolicyGrants for `userId` in `namespace`: the API server failing
 * one write of a create that already made others. Waits until the API server enforces it.
 */
async function refuseGrantsTo(userId: string, namespace: string): Promise<KubernetesObject[]> {
  const name = uniqueId('rbac-proof-refusal');
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [API_GROUP],
            apiVersions: ['*'],
            operations: ['CREATE'],
            resources: [POLICY_GRANT_PLURAL],
          },
        ],
      },
      validations: [
        {
          expression: `!has(object.spec.userId) || object.spec.userId != '${userId}'`,
          message: 'refused by the RBAC proof',
          reason: 'Invalid',
        },
      ],
    },
  };
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: ['Deny'],
      matchResources: {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
      },
    },
  };
  const objects = testKubeConfig().makeApiClient(KubernetesObjectApi);
  const created = [await objects.create(policy), await objects.create(binding)];
  await promptly(async () => expect(await dryRunGrantStatus(userId, namespace)).toBe(422));
  return created;
}

async function dryRunGrantStatus(userId: string, namespace: string): Promise<number> {
  try {
    await testKubeConfig()
      .makeApiClient(CustomObjectsApi)
      .createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace,
        plural: POLICY_GRANT_PLURAL,
        body: {
          apiVersion: GROUP_VERSION,
          kind: POLICY_GRANT_KIND,
          metadata: { generateName: 'refused-' },
          spec: individual(`urn:dx:item:${randomUUID()}`, ['api'], { userId }),
        },
        dryRun: 'All',
      });
    return 201;
  } catch (error) {
    return (error as { code?: number }).code ?? 0;
  }
}
