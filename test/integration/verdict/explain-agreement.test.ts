import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { delimiter, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELEGATION_RESOURCE, EnforcedReason, type Delegation } from '../../../src/api/v1alpha1/index.js';
import { collectionPath } from '../../../src/kube/index.js';
import { run } from '../../../src/kubectl-grants/main.js';
import type { Explanation, ExplainReason, Subject } from '../../../src/verdict/explanation.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { resolveToolPaths } from '../../../dev/localplane/tool-paths.js';
import { untilBarrierAgrees } from '../../support/barrier-agreement.js';
import { AclHarness, inDays, type Caller } from '../acl/support/acl-harness.js';
import { individual, useControllerFixture } from '../controller/support/harness.js';
import {
  startServiceUnderTest,
  untilReady,
  type DecisionServiceUnderTest,
} from '../decision/support/decision-service.js';
import { controlPlane } from '../support/cluster.js';

// One explanation everywhere: for each reason of the verdict, GET /v2/explain (over the ACL API's cache), the
// kubectl plugin (over what the user's kubeconfig reads) and POST /v1/check (SpiceDB, as the controller wrote
// it) agree on the same state. Real kube-apiserver, etcd, SpiceDB, controller, ACL API and decision service.

const fixture = useControllerFixture('explain-agreement');
const acl = new AclHarness();
let decision: DecisionServiceUnderTest;
let cosAdmin: Caller;

beforeAll(async () => {
  await acl.start('explain-agreement', { namespace: fixture.aclNamespace });
  decision = await startServiceUnderTest({ spicedb: fixture.spicedb.server });
  await untilReady(decision);
  cosAdmin = await acl.user({ roles: ['cos_admin'] });
});

afterAll(async () => {
  await decision?.stop();
  await acl.stop();
});

/** What a case leaves for the three surfaces to explain. */
interface Situation {
  subject: Subject;
  itemId: string;
  /** The grant or delegation under test, `namespace/name`, and its reason in the explanation. */
  ref: string;
  reason: ExplainReason;
  allowed: boolean;
}

async function viaRest(situation: Situation): Promise<Explanation | undefined> {
  const { subject, itemId } = situation;
  const query = new URLSearchParams({
    [subject.type === 'user' ? 'userId' : 'agentId']: subject.id,
    itemId,
    accessType: 'api',
  });
  const answer = await acl.request<{ results: Explanation[] }>('GET', `/explain?${query}`, {
    caller: cosAdmin,
  });
  expect(answer.status).toBe(200);
  return answer.body.results[0];
}

async function viaPlugin(situation: Situation): Promise<Explanation> {
  const { subject, itemId } = situation;
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(
    [
      'explain',
      subject.type === 'user' ? subject.id : `agent:${subject.id}`,
      itemId,
      'api',
      '-o',
      'json',
      '--kubeconfig',
      controlPlane().kubeconfigPath,
      '--acl-namespace',
      fixture.aclNamespace,
    ],
    { out: (text) => out.push(text), err: (text) => err.push(text) },
  );
  expect({ code, err }).toEqual({ code: 0, err: [] });
  return JSON.parse(out.join('\n')) as Explanation;
}

/** The verdict, and the reason of the object under test, as one explanation gives them. */
function summary(explanation: Explanation | undefined, ref: string) {
  const object = explanation?.objects.find((candidate) => candidate.ref === ref);
  return { allowed: explanation?.allowed, enforced: explanation?.enforced, reason: object?.reason };
}

function checkOf({ subject, itemId }: Situation) {
  return {
    subject_type: subject.type,
    subject_id: subject.id,
    resource_type: 'resource',
    resource_id: itemId,
    relation: subject.type === 'user' ? 'api' : 'delegated_querier',
  };
}

async function expectAgreement(situation: Situation): Promise<void> {
  const expected = { allowed: situation.allowed, enforced: situation.allowed, reason: situation.reason };
  await expect.poll(async () => summary(await viaRest(situation), situation.ref)).toEqual(expected);
  await expect.poll(async () => summary(await viaPlugin(situation), situation.ref)).toEqual(expected);
  await untilBarrierAgrees({
    allowed: async () => (await decision.check(checkOf(situation))).body.result.allowed,
    metricsText: () => decision.metrics.metrics(),
    expected: situation.allowed,
    what: `${situation.ref}: ${situation.reason}`,
  });
}

interface IndividualOptions {
  namespace?: (itemOrganisation: string) => Promise<string>;
  item?: Record<string, unknown>;
  grantItemId?: string;
  expiryTime?: string;
  accessTypes?: string[];
}

/** An item of a fresh organisation, and an INDIVIDUAL api grant on it to a fresh user. */
async function individualGrant(options: IndividualOptions = {}) {
  const organisationId = randomUUID();
  const item = await fixture.resources.createItem({ organisationId, ...options.item });
  const namespace = options.namespace ? await options.namespace(organisationId) : fixture.aclNamespace;
  const spec = individual(options.grantItemId ?? item.spec.itemId, options.accessTypes, {
    ...(options.expiryTime ? { expiryTime: options.expiryTime } : {}),
  });
  const { name } = await fixture.resources.createGrant(namespace, spec);
  return { item, namespace, name, spec, organisationId, ref: `${namespace}/${name}` };
}

async function settled(
  grant: { namespace: string; name: string; spec: { userId: string; itemId: string }; ref: string },
  reason: string,
  explained: ExplainReason,
  allowed = false,
): Promise<Situation> {
  await fixture.resources.waitForReason(grant.namespace, grant.name, reason);
  return {
    subject: { type: 'user', id: grant.spec.userId },
    itemId: grant.spec.itemId,
    ref: grant.ref,
    reason: explained,
    allowed,
  };
}

const cases: [string, () => Promise<Situation>][] = [
  ['effective', async () => settled(await individualGrant(), EnforcedReason.Projected, 'Effective', true)],
  [
    'revoked',
    async () => {
      const grant = await individualGrant();
      await fixture.resources.revoke(grant.namespace, grant.name);
      return settled(grant, EnforcedReason.Revoked, 'Revoked');
    },
  ],
  [
    'expired',
    async () => settled(await individualGrant({ expiryTime: inDays(-1) }), EnforcedReason.Expired, 'Expired'),
  ],
  [
    'in a namespace not bound to an organisation',
    async () =>
      settled(
        await individualGrant({ namespace: () => fixture.resources.namespace('unbound') }),
        EnforcedReason.NotAuthorized,
        'NamespaceNotBound',
      ),
  ],
  [
    'in a namespace bound to another organisation',
    async () =>
      settled(
        await individualGrant({
          namespace: () => fixture.resources.namespace('other', { [ORGANISATION_LABEL]: randomUUID() }),
        }),
        EnforcedReason.NotAuthorized,
        'NamespaceBoundToAnotherOrganisation',
      ),
  ],
  [
    'on a missing item',
    async () =>
      settled(
        await individualGrant({ grantItemId: `urn:dx:item:missing-${randomUUID()}` }),
        EnforcedReason.ItemNotFound,
        'ItemMissing',
      ),
  ],
  [
    'on an ambiguous item',
    async () => {
      const grant = await individualGrant();
      await fixture.resources.createItem({ itemId: grant.item.spec.itemId });
      return settled(grant, EnforcedReason.ItemNotFound, 'ItemAmbiguous');
    },
  ],
  [
    'on an item of another type',
    async () =>
      settled(
        await individualGrant({ item: { itemType: 'DATASET' } }),
        EnforcedReason.ItemNotFound,
        'ItemOfAnotherType',
      ),
  ],
  [
    'whose access type the item withdrew',
    async () => {
      const grant = await individualGrant({ accessTypes: ['api', 'file'] });
      await fixture.resources.updateItemSpec(grant.item.name, { accessTypes: ['file'] });
      return settled(grant, 'AccessTypeNotAllowed', 'AccessTypeWithdrawn');
    },
  ],
  [
    'younger than a grant of the same access',
    async () => {
      const older = await individualGrant();
      await fixture.resources.waitForReason(older.namespace, older.name, EnforcedReason.Projected);
      const { name } = await fixture.resources.createGrant(
        fixture.aclNamespace,
        older.spec,
        `${older.name}-younger`,
      );
      const younger = { ...older, name, ref: `${fixture.aclNamespace}/${name}` };
      return settled(younger, EnforcedReason.Conflict, 'Conflict', true);
    },
  ],
  [
    'GROUP, to a user who is no member',
    async () => {
      const item = await fixture.resources.createItem();
      const spec = {
        policyType: 'GROUP' as const,
        itemId: item.spec.itemId,
        itemType: 'DATABANK',
        expiryTime: inDays(30),
        constraints: { access: [{ accessType: 'api' }], subjects: { allowedOrgIds: [randomUUID()] } },
      };
      const { name } = await fixture.resources.createGrant(fixture.aclNamespace, spec);
      await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
      return {
        subject: { type: 'user', id: randomUUID() },
        itemId: item.spec.itemId,
        ref: '',
        reason: 'NotMember',
        allowed: false,
      };
    },
  ],
];

describe('REST, the kubectl plugin and /v1/check agree on why', () => {
  it.each(cases)('a grant %s', async (_name, arrange) => {
    await expectAgreement(await arrange());
  });

  it("an agent's delegation: effective while its owner holds api, OwnerLacksAccess once the owner's grant is revoked", async () => {
    const grant = await individualGrant();
    await fixture.resources.waitForReason(grant.namespace, grant.name, EnforcedReason.Projected);
    const owner = await acl.user({ id: grant.spec.userId });
    const agentId = `agent-${randomUUID()}`;
    const created = await acl.request<{ results: { delegationId: string }[] }>('POST', '/delegations', {
      caller: owner,
      body: { agentId, itemId: grant.spec.itemId, relation: 'querier', expiryTime: inDays(30) },
    });
    expect(created.status).toBe(201);
    const delegations = await acl.kube.call<{ items: Delegation[] }>({
      method: 'GET',
      path: collectionPath(DELEGATION_RESOURCE, fixture.aclNamespace),
    });
    const delegation = delegations.items.find((candidate) => candidate.spec.agentId === agentId);
    const ref = `${fixture.aclNamespace}/${delegation?.metadata.name}`;
    const situation = { subject: { type: 'agent', id: agentId } as const, itemId: grant.spec.itemId, ref };
    await expectAgreement({ ...situation, reason: 'Effective', allowed: true });
    await fixture.resources.revoke(grant.namespace, grant.name);
    await fixture.resources.waitForReason(grant.namespace, grant.name, EnforcedReason.Revoked);
    await expectAgreement({ ...situation, reason: 'OwnerLacksAccess', allowed: false });
  });
});

describe('GET /v2/explain', () => {
  it('answers the item owner and its org_admin, 403 for anyone else, 400 for a malformed query, 401 without credentials, and audits each', async () => {
    const organisationId = randomUUID();
    const ownerId = randomUUID();
    const item = await fixture.resources.createItem({ ownerId, organisationId });
    const query = `itemId=${encodeURIComponent(item.spec.itemId)}&accessType=api`;
    const ask = async (caller: Caller | undefined, path = `/explain?userId=${randomUUID()}&${query}`) =>
      await acl.request<{ type: string; detail?: string }>('GET', path, caller ? { caller } : {});
    await expect.poll(async () => (await ask(await acl.user({ id: ownerId }))).status).toBe(200);
    expect((await ask(await acl.user({ roles: ['org_admin'], org: organisationId }))).status).toBe(200);
    const refused = await ask(await acl.user({ roles: ['org_admin'], org: randomUUID() }));
    expect(refused).toMatchObject({ status: 403, body: { type: 'urn:dx:acl:Forbidden' } });
    const both = await ask(cosAdmin, `/explain?userId=${randomUUID()}&agentId=a&${query}`);
    expect(both).toMatchObject({ status: 400, body: { detail: expect.stringContaining('userId') } });
    expect((await ask(cosAdmin, `/explain?${query}`)).status).toBe(400);
    expect((await ask(undefined)).status).toBe(401);

    // Audited as a read of sensitive data: answered and refused alike, on the item.
    const audit = await acl.request<{ results: { outcome: { status: number } }[] }>(
      'GET',
      `/audit?action=explain.read&itemId=${encodeURIComponent(item.spec.itemId)}`,
      { caller: cosAdmin },
    );
    const statuses = audit.body.results.map((record) => record.outcome.status).sort();
    expect(statuses).toEqual(expect.arrayContaining([200, 200, 403]));
  });
});

describe('the kubectl-grants executable', () => {
  it('runs as `kubectl grants` once bin/ is on PATH (the krew-style install), and lists who can', async () => {
    const grant = await individualGrant();
    await fixture.resources.waitForReason(grant.namespace, grant.name, EnforcedReason.Projected);
    const kubectl = controlPlane().tools.kubectl ?? (await resolveToolPaths()).kubectl;
    const { stdout } = await promisify(execFile)(
      kubectl,
      ['grants', 'who-can', grant.spec.itemId, 'api', '--acl-namespace', fixture.aclNamespace],
      {
        env: {
          ...process.env,
          PATH: `${resolve('bin')}${delimiter}${process.env.PATH ?? ''}`,
          KUBECONFIG: controlPlane().kubeconfigPath,
        },
      },
    );
    const [header, row] = stdout.trimEnd().split('\n');
    expect(header).toMatch(/^KIND\s+OBJECT\s+POLICY\s+SUBJECT\s+ACCESS\s+EXPIRY$/);
    expect(row).toContain(`PolicyGrant   ${grant.ref}`);
    expect(row).toContain(`user:${grant.spec.userId}`);
  });
});
