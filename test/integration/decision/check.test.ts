import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBasicVerifier } from '../../../src/auth/basic-verifier.js';
import { hashSecret } from '../../../src/auth/secret-hash.js';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import type { Relationship, RelationshipUpdate } from '../../../src/spicedb/client.js';
import { encodeObjectId, groupObjectId } from '../../../src/spicedb/object-id.js';
import { FAST } from '../../unit/auth/support/fast-scrypt.js';
import { signToken, testKey, unsignedToken, standardClaims } from '../../unit/auth/support/tokens.js';
import { testSpiceDB, uniqueId } from '../support/cluster.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';

// The shared SpiceDB of the run, with the project schema: every test names its own items, users and groups.
let client: SpiceDBClient;
let service: DecisionServiceUnderTest;
const APP_SECRET = 'app-secret';

beforeAll(async () => {
  client = new SpiceDBClient({ ...testSpiceDB(), transport: 'plaintext' });
  const basic = createBasicVerifier([
    { clientId: 'gateway', hash: await hashSecret(APP_SECRET, FAST), roles: [DECISION_CLIENT_ROLE] },
  ]);
  service = await startServiceUnderTest({ spicedb: testSpiceDB(), basic });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
  client?.close();
});

const inAnHour = () => new Date(Date.now() + 3_600_000);

function newItem(): { itemId: string; resource: { type: string; id: string } } {
  const itemId = `urn:dx:item:${uniqueId('decision')}`;
  return { itemId, resource: { type: 'resource', id: encodeObjectId(itemId) } };
}

function touch(relationship: Relationship): RelationshipUpdate {
  return { operation: 'touch', relationship };
}

/** A direct grant of `api` on the item to the user, for an hour. */
function apiConsumer(resource: Relationship['resource'], userId: string): Relationship {
  return { resource, relation: 'api_consumer', subject: { type: 'user', id: userId }, expiresAt: inAnHour() };
}

function userCheck(userId: string, itemId: string, relation: string, extra: Record<string, unknown> = {}) {
  return {
    subject_type: 'user',
    subject_id: userId,
    resource_type: 'resource',
    resource_id: itemId,
    relation,
    ...extra,
  };
}

describe('POST /v1/check against the real SpiceDB', () => {
  it('allows a user holding a direct api_consumer grant, and no one else', async () => {
    const { itemId, resource } = newItem();
    const [consumer, other] = [uniqueId('user'), uniqueId('user')];
    const zedToken = await client.writeRelationships([touch(apiConsumer(resource, consumer))]);
    const fresh = { consistency_token: zedToken };

    const allowed = await service.check(userCheck(consumer, itemId, 'api', fresh));
    expect(allowed.status).toBe(200);
    expect(allowed.body).toEqual({
      type: 'urn:dx:authz:Success',
      title: 'Allowed',
      result: {
        allowed: true,
        subject: { type: 'user', id: consumer },
        object: { type: 'resource', id: itemId },
        relation: 'api',
        checked_at: expect.any(String),
      },
    });
    expect((await service.check(userCheck(other, itemId, 'api', fresh))).body.result.allowed).toBe(false);
    expect((await service.check(userCheck(consumer, itemId, 'file', fresh))).body.result.allowed).toBe(false);
    expect((await service.check(userCheck(consumer, `${itemId}x`, 'api', fresh))).body.result.allowed).toBe(
      false,
    );
  });

  it('answers viewer for an editor, but not editor for a viewer', async () => {
    const { itemId, resource } = newItem();
    const [editor, viewer] = [uniqueId('editor'), uniqueId('viewer')];
    const zedToken = await client.writeRelationships([
      touch({ resource, relation: 'editor', subject: { type: 'user', id: editor } }),
      touch({ resource, relation: 'direct_viewer', subject: { type: 'user', id: viewer } }),
    ]);
    const decide = async (user: string, relation: string) =>
      (await service.check(userCheck(user, itemId, relation, { consistency_token: zedToken }))).body.result
        .allowed;
    expect(await decide(editor, 'viewer')).toBe(true);
    expect(await decide(editor, 'editor')).toBe(true);
    expect(await decide(viewer, 'viewer')).toBe(true);
    expect(await decide(viewer, 'editor')).toBe(false);
  });

  it('accepts the ACL item type DATABANK as an alias and answers with the canonical type', async () => {
    const { itemId, resource } = newItem();
    const consumer = uniqueId('user');
    const zedToken = await client.writeRelationships([touch(apiConsumer(resource, consumer))]);
    const { status, body } = await service.check(
      userCheck(consumer, itemId, 'api', { resource_type: 'DATABANK', consistency_token: zedToken }),
    );
    expect(status).toBe(200);
    expect(body.result).toMatchObject({ allowed: true, object: { type: 'resource', id: itemId } });
  });

  it('checks a group as its members within its organisation only', async () => {
    const { itemId, resource } = newItem();
    const [organisationId, otherOrganisation, groupId] = [uniqueId('org'), uniqueId('org'), 'analysts'];
    const group = { type: 'group', id: groupObjectId(organisationId, groupId), relation: 'member' };
    const zedToken = await client.writeRelationships([
      touch({
        resource: { type: 'group', id: group.id },
        relation: 'member',
        subject: { type: 'user', id: uniqueId('user') },
      }),
      touch({ resource, relation: 'direct_viewer', subject: group }),
    ]);
    const groupCheck = (organisation: string) => ({
      subject_type: 'group',
      subject_id: groupId,
      organisation_id: organisation,
      resource_type: 'resource',
      resource_id: itemId,
      relation: 'viewer',
      consistency_token: zedToken,
    });

    const ofTheOrganisation = await service.check(groupCheck(organisationId));
    expect(ofTheOrganisation.body.result).toMatchObject({
      allowed: true,
      subject: { type: 'group', id: groupId, organisation_id: organisationId },
    });
    expect((await service.check(groupCheck(otherOrganisation))).body.result.allowed).toBe(false);
  });

  it('applies the organisation_id rules and rejects relations the type does not define', async () => {
    const { itemId } = newItem();
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        {
          subject_type: 'group',
          subject_id: 'g',
          resource_type: 'resource',
          resource_id: itemId,
          relation: 'viewer',
        },
        'organisation_id',
      ],
      [{ ...userCheck('u', itemId, 'viewer'), organisation_id: 'org-1' }, 'organisation_id'],
      [userCheck('u', itemId, 'api_consumer'), 'relation'],
      [userCheck('u', itemId, 'member'), 'relation'],
    ];
    for (const [body, field] of cases) {
      const { status, body: answer } = await service.check(body);
      expect(status).toBe(400);
      expect(answer.type).toBe('urn:dx:authz:BadRequest');
      expect(answer.detail).toMatch(new RegExp(`^${field}: `));
      expect(answer.result).toEqual({ allowed: false });
    }
    // An empty organisation_id is the spec's way to say "none" for a user.
    expect((await service.check({ ...userCheck('u', itemId, 'viewer'), organisation_id: '' })).status).toBe(
      200,
    );
  });
});

describe('consistency', () => {
  it('sees a just-written grant, and a just-deleted one gone, with the write’s token, every time', async () => {
    for (let iteration = 0; iteration < 10; iteration++) {
      const { itemId, resource } = newItem();
      const consumer = uniqueId('user');
      const grant = apiConsumer(resource, consumer);
      const written = await client.writeRelationships([touch(grant)]);
      const afterWrite = await service.check(
        userCheck(consumer, itemId, 'api', { consistency_token: written }),
      );
      expect(afterWrite.body.result.allowed, `iteration ${iteration}, after the write`).toBe(true);

      const deleted = await client.writeRelationships([{ operation: 'delete', relationship: grant }]);
      const afterDelete = await service.check(
        userCheck(consumer, itemId, 'api', { consistency_token: deleted }),
      );
      expect(afterDelete.body.result.allowed, `iteration ${iteration}, after the delete`).toBe(false);
    }
  });

  it('without a token answers from a recent snapshot: a grant shows up within seconds', async () => {
    const { itemId, resource } = newItem();
    const consumer = uniqueId('user');
    await client.writeRelationships([touch(apiConsumer(resource, consumer))]);
    await expect
      .poll(async () => (await service.check(userCheck(consumer, itemId, 'api'))).body.result.allowed)
      .toBe(true);
  });
});

describe('callers', () => {
  it('accepts a JWT of the identity provider and Basic application credentials', async () => {
    const { itemId } = newItem();
    expect((await service.check(userCheck('u', itemId, 'api'))).status).toBe(200);
    const basic = `Basic ${Buffer.from(`gateway:${APP_SECRET}`).toString('base64')}`;
    expect((await service.check(userCheck('u', itemId, 'api'), { authorization: basic })).status).toBe(200);
  });

  it('answers 401 with allowed false without credentials or with forged ones', async () => {
    const { itemId } = newItem();
    const strangerKey = await testKey('ES256', service.key.kid);
    const forged = [
      '',
      `Bearer ${await signToken(strangerKey)}`,
      `Bearer ${unsignedToken(standardClaims())}`,
      `Bearer ${await signToken(service.key, {}, { expiresIn: -120 })}`,
      `Bearer ${await signToken(service.key, {}, { audience: 'another-service' })}`,
      `Basic ${Buffer.from('gateway:wrong').toString('base64')}`,
    ];
    for (const authorization of forged) {
      const { status, body } = await service.check(userCheck('u', itemId, 'api'), { authorization });
      expect(status, authorization.slice(0, 20)).toBe(401);
      expect(body).toMatchObject({ type: 'urn:dx:authz:Unauthorized', result: { allowed: false } });
    }
  });
});

describe('operational endpoints', () => {
  it('is ready against a SpiceDB with the schema, and exports its metrics', async () => {
    const { itemId, resource } = newItem();
    const consumer = uniqueId('user');
    const zedToken = await client.writeRelationships([touch(apiConsumer(resource, consumer))]);
    const consistency = { consistency_token: zedToken };
    expect((await service.check(userCheck(consumer, itemId, 'api', consistency))).body.result.allowed).toBe(
      true,
    );
    expect((await service.check(userCheck('u', itemId, 'api', consistency))).body.result.allowed).toBe(false);
    const ready = await fetch(`${service.url}/healthz/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      results: [
        { name: 'spicedb', status: 'ok' },
        { name: 'spicedb-watch', status: 'ok' },
      ],
    });
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toMatch(/policygrant_decisions_total\{result="allowed"\} [1-9]/);
    expect(metrics).toMatch(/policygrant_decisions_total\{result="denied"\} [1-9]/);
    expect(metrics).toMatch(/policygrant_decision_check_duration_seconds_count\{result="denied"\} [1-9]/);
    expect(metrics).toContain('policygrant_http_request_duration_seconds');
  });
});
