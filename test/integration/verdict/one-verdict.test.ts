import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnforcedReason, type PolicyGrantSpec } from '../../../src/api/v1alpha1/index.js';
import { GrantReason } from '../../../src/verdict/grant-verdict.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { AclHarness, inDays, type Caller } from '../acl/support/acl-harness.js';
import { useControllerFixture } from '../controller/support/harness.js';

// One verdict everywhere: for every case of the grant verdict, the controller's Enforced condition, POST
// /verify, the consumer listing's row and the 409 rule (an API create of the same subject, item and access
// type) all say the same. Real kube-apiserver, etcd, SpiceDB, controller and ACL API; grants are applied
// with the kube API (as kubectl would), in the controller's scope, so that the controller reconciles them.

const fixture = useControllerFixture('one-verdict');
const acl = new AclHarness();

beforeAll(async () => {
  await acl.start('one-verdict', { namespace: fixture.aclNamespace });
});

afterAll(() => acl.stop());

/** What one case leaves: the grant under test, who it is for, and the access a new create would repeat. */
interface Arranged {
  namespace: string;
  name: string;
  /** The user who asks verify and lists as consumer. */
  consumer: Caller;
  /** The item's owner, who makes the create that the 409 rule judges. */
  owner: Caller;
  /** The create of the same subject, item and access type. */
  repeat: PolicyGrantSpec;
}

interface Case {
  name: string;
  arrange: () => Promise<Arranged>;
  /** The Enforced reason: Projected when the grant is effective. */
  reason: string;
  /** Whether verify lists the grant (effective, and for GROUP grants a member asks). */
  verifyIncludes: boolean;
  /** False when the consumer's listing leaves the grant out: a GROUP grant whose consumer is no member. */
  listed?: false;
  /** The answer to the repeated create: 409 only while an effective grant already gives that access. */
  create: { status: number; detail?: RegExp };
}

async function itemOf(owner: Caller, organisationId: string, spec: Record<string, unknown> = {}) {
  return fixture.resources.createItem({ ownerId: owner.id, organisationId, ...spec });
}

function individualSpec(itemId: string, userId: string, accessTypes: string[]): PolicyGrantSpec {
  return {
    policyType: 'INDIVIDUAL',
    userId,
    itemId,
    itemType: 'DATABANK',
    expiryTime: inDays(30),
    constraints: { access: accessTypes.map((accessType) => ({ accessType })) },
  };
}

function groupSpec(itemId: string, organisationId: string): PolicyGrantSpec {
  return {
    policyType: 'GROUP',
    itemId,
    itemType: 'DATABANK',
    expiryTime: inDays(30),
    constraints: { access: [{ accessType: 'api' }], subjects: { allowedOrgIds: [organisationId] } },
  };
}

/**
 * An INDIVIDUAL grant on a fresh item, applied with the kube API; the options shape the item, the grant and
 * where it lives, and change the objects before (`before`) or after (`after`) the grant is applied. The repeated
 * create gives the same user access type api on the grant's item id, with the item's type.
 */
async function individualCase(
  options: {
    namespace?: (itemOrganisation: string) => Promise<string>;
    grant?: (spec: PolicyGrantSpec) => PolicyGrantSpec;
    item?: Record<string, unknown>;
    before?: (itemId: string, organisationId: string) => Promise<void>;
    after?: (arranged: Arranged, itemName: string) => Promise<void>;
    accessTypes?: string[];
  } = {},
): Promise<Arranged> {
  const organisationId = randomUUID();
  const owner = await acl.user({ org: organisationId });
  const consumer = await acl.user();
  const item = await itemOf(owner, organisationId, options.item);
  await options.before?.(item.spec.itemId, organisationId);
  const namespace = options.namespace ? await options.namespace(organisationId) : fixture.aclNamespace;
  const spec = individualSpec(item.spec.itemId, consumer.id, options.accessTypes ?? ['api']);
  const grant = options.grant ? options.grant(spec) : spec;
  const { name } = await fixture.resources.createGrant(namespace, { ...grant, issuerId: owner.id });
  const repeat = { ...individualSpec(grant.itemId, consumer.id, ['api']), itemType: item.spec.itemType };
  const arranged = { namespace, name, consumer, owner, repeat };
  await options.after?.(arranged, item.name);
  return arranged;
}

/** Two grants of the same access: the younger one is under test. */
async function conflictCase(): Promise<Arranged> {
  const older = await individualCase();
  await fixture.resources.waitForReason(older.namespace, older.name, EnforcedReason.Projected);
  const younger = { ...older.repeat, issuerId: older.owner.id };
  // Created in the same second, grants are ordered by name: this one comes after the older one either way.
  const { name } = await fixture.resources.createGrant(
    fixture.aclNamespace,
    younger,
    `${older.name}-younger`,
  );
  return { ...older, name };
}

/** A GROUP grant for one organisation; verify is asked by a user of it, a member or not. */
async function groupCase(member: boolean): Promise<Arranged> {
  const [itemOrganisation, consumerOrganisation] = [randomUUID(), randomUUID()];
  const owner = await acl.user({ org: itemOrganisation });
  const consumer = await acl.user({ org: consumerOrganisation });
  const item = await itemOf(owner, itemOrganisation);
  if (member) await acl.addMember(consumerOrganisation, consumer.id);
  const spec = groupSpec(item.spec.itemId, consumerOrganisation);
  const { name } = await fixture.resources.createGrant(fixture.aclNamespace, { ...spec, issuerId: owner.id });
  return { namespace: fixture.aclNamespace, name, consumer, owner, repeat: spec };
}

const REFUSED = { status: 201 };
const BLOCKED = { status: 409, detail: /^an active policy already gives/ };
/** Authority before item facts: no one administers a missing item, and the owner of one of two not both. */
const NO_AUTHORITY = { status: 403, detail: /may grant access to it$/ };

const cases: Case[] = [
  {
    name: 'effective',
    arrange: () => individualCase(),
    reason: EnforcedReason.Projected,
    verifyIncludes: true,
    create: BLOCKED,
  },
  {
    name: 'revoked',
    arrange: () =>
      individualCase({
        after: async ({ namespace, name }) => {
          await fixture.resources.revoke(namespace, name);
        },
      }),
    reason: EnforcedReason.Revoked,
    verifyIncludes: false,
    create: REFUSED,
  },
  {
    name: 'expired',
    arrange: () => individualCase({ grant: (spec) => ({ ...spec, expiryTime: inDays(-1) }) }),
    reason: EnforcedReason.Expired,
    verifyIncludes: false,
    create: REFUSED,
  },
  {
    name: "in a namespace bound to the item's organisation",
    arrange: () =>
      individualCase({
        namespace: (organisation) =>
          fixture.resources.namespace('bound', { [ORGANISATION_LABEL]: organisation }),
      }),
    reason: EnforcedReason.Projected,
    verifyIncludes: true,
    create: BLOCKED,
  },
  {
    name: 'in a namespace not bound to the item organisation',
    arrange: () =>
      individualCase({
        namespace: () => fixture.resources.namespace('unbound'),
      }),
    reason: EnforcedReason.NotAuthorized,
    verifyIncludes: false,
    create: REFUSED,
  },
  {
    name: 'on a missing item',
    arrange: () =>
      individualCase({ grant: (spec) => ({ ...spec, itemId: `urn:dx:item:missing-${randomUUID()}` }) }),
    reason: EnforcedReason.ItemNotFound,
    verifyIncludes: false,
    create: NO_AUTHORITY,
  },
  {
    name: 'on an ambiguous item',
    arrange: () =>
      individualCase({
        before: async (itemId, organisationId) => {
          await fixture.resources.createItem({ itemId, organisationId });
        },
      }),
    reason: EnforcedReason.ItemNotFound,
    verifyIncludes: false,
    create: NO_AUTHORITY,
  },
  {
    name: 'of another item type than its item',
    arrange: () => individualCase({ item: { itemType: 'DATASET' } }),
    reason: EnforcedReason.ItemNotFound,
    verifyIncludes: false,
    create: REFUSED,
  },
  {
    name: 'with an access type the item withdrew',
    arrange: () =>
      individualCase({
        accessTypes: ['api', 'file'],
        after: async (_arranged, itemName) => {
          await fixture.resources.updateItemSpec(itemName, { accessTypes: ['api', 'sub'] });
        },
      }),
    reason: GrantReason.AccessTypeNotAllowed,
    verifyIncludes: false,
    create: REFUSED,
  },
  {
    name: 'younger than a grant of the same access (Conflict)',
    arrange: conflictCase,
    reason: EnforcedReason.Conflict,
    verifyIncludes: false,
    create: BLOCKED,
  },
  {
    name: 'GROUP, asked by a member of an allowed organisation',
    arrange: () => groupCase(true),
    reason: EnforcedReason.Projected,
    verifyIncludes: true,
    create: BLOCKED,
  },
  {
    name: 'GROUP, asked by a user who is no member',
    arrange: () => groupCase(false),
    reason: EnforcedReason.Projected,
    verifyIncludes: false,
    listed: false,
    create: BLOCKED,
  },
];

interface Row {
  policyId: string;
  status: string;
  enforced: boolean;
  enforcedReason?: string;
}

async function verifiedIds(arranged: Arranged, itemId: string): Promise<string[]> {
  const answer = await acl.request<{ results?: { id: string }[]; title: string }>('POST', '/verify', {
    caller: arranged.consumer,
    body: { user: { id: arranged.consumer.id }, item: { itemId } },
  });
  if (answer.status === 403 && answer.body.title === 'No active policy') return [];
  expect(answer.status).toBe(200);
  return (answer.body.results ?? []).map((result) => result.id);
}

/** The verdict part of the grant's row in its consumer's listing. */
async function consumerRow(arranged: Arranged, uid: string): Promise<Omit<Row, 'policyId'> | undefined> {
  const answer = await acl.request<{ results: Row[] }>('GET', '/policy/consumer?limit=1000', {
    caller: arranged.consumer,
  });
  expect(answer.status).toBe(200);
  const row = answer.body.results.find((candidate) => candidate.policyId === uid);
  return row && { status: row.status, enforced: row.enforced, enforcedReason: row.enforcedReason };
}

/** The record state a listing shows whatever the verdict. */
function recordState(reason: string): string {
  if (reason === EnforcedReason.Revoked) return 'DELETED';
  return reason === EnforcedReason.Expired ? 'EXPIRED' : 'ACTIVE';
}

describe('one verdict: the controller, verify, the listings and the 409 rule agree', () => {
  it.each(cases)('a grant $name', async ({ arrange, reason, verifyIncludes, listed, create }) => {
    const arranged = await arrange();
    const grant = await fixture.resources.waitForReason(arranged.namespace, arranged.name, reason);
    const uid = grant.metadata.uid ?? '';
    const effective = reason === EnforcedReason.Projected;

    // The ACL API's caches follow the apiserver on watches of their own: wait until its answers show what the
    // controller shows (a disagreement never converges and fails here), then ask the 409 rule once.
    const row = {
      status: recordState(reason),
      enforced: effective,
      enforcedReason: effective ? undefined : reason,
    };
    await expect.poll(() => consumerRow(arranged, uid)).toEqual(listed === false ? undefined : row);
    await expect
      .poll(async () => (await verifiedIds(arranged, grant.spec.itemId)).includes(uid))
      .toBe(verifyIncludes);

    const answer = await acl.request<{ detail?: string }>('POST', '/policy', {
      caller: arranged.owner,
      body: { request: [arranged.repeat] },
    });
    expect(answer.status, answer.body.detail).toBe(create.status);
    if (create.detail) expect(answer.body.detail).toMatch(create.detail);
  });
});
