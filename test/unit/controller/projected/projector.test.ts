import { describe, expect, it } from 'vitest';
import type { PolicyGrant } from '../../../../src/api/v1alpha1/index.js';
import { KeyedMutex } from '../../../../src/controller/keyed-mutex.js';
import { LastWrites } from '../../../../src/controller/projected/last-writes.js';
import { Projector } from '../../../../src/controller/projected/projector.js';
import { WriteBatcher } from '../../../../src/controller/write-batcher.js';
import { projectGrant } from '../../../../src/verdict/projection.js';
import { tupleKey } from '../../../../src/verdict/tuple-key.js';
import {
  ACL_NAMESPACE,
  consumerTuple,
  FakeRelationshipStore,
  NOW,
  ORG_A,
  ORG_B,
  OTHER_USER,
  policyGrant,
  registry,
  testGrantKind,
  testCluster,
  USER,
  type TestCluster,
} from '../support/fakes.js';

function setUp(grants: PolicyGrant[] = []) {
  const test: TestCluster = testCluster({ grants });
  const store = new FakeRelationshipStore();
  const lastWrites = new LastWrites();
  const deleted: { keys: string[]; by: string }[] = [];
  const projector = new Projector<PolicyGrant>({
    store,
    kind: testGrantKind(test.cluster),
    lastWrites,
    mutex: new KeyedMutex(),
    onTuplesDeleted: (keys, by) => deleted.push({ keys, by }),
    now: () => NOW,
  });
  return { ...test, store, lastWrites, projector, deleted };
}

const keyOf = (grant: PolicyGrant) => `${ACL_NAMESPACE}/${grant.metadata.name}`;
const relationshipsOf = (grant: PolicyGrant) => projectGrant(grant.spec, registry).relationships;

describe('Projector.enforce', () => {
  it('writes the relationships once and returns the write ZedToken; the same again writes nothing', async () => {
    const grant = policyGrant('g');
    const { projector, store } = setUp([grant]);
    const token = await projector.enforce(keyOf(grant), relationshipsOf(grant));
    expect(store.keys()).toEqual([tupleKey(consumerTuple())]);
    expect(await projector.enforce(keyOf(grant), relationshipsOf(grant))).toBe(token);
    expect(store.writeCalls).toHaveLength(1);
  });

  it('writes again when the expiration changes', async () => {
    const grant = policyGrant('g');
    const { projector, store } = setUp([grant]);
    await projector.enforce(keyOf(grant), relationshipsOf(grant));
    const extended = policyGrant('g', { expiryTime: '2100-01-01T00:00:00Z' });
    await projector.enforce(keyOf(grant), relationshipsOf(extended));
    expect(store.tuples.get(tupleKey(consumerTuple()))?.expiresAt).toEqual(new Date('2100-01-01T00:00:00Z'));
  });

  it('deletes, in the same call, what an edited grant no longer projects', async () => {
    const grant = policyGrant('g', {
      constraints: { access: [{ accessType: 'api' }, { accessType: 'file' }] },
    });
    const { projector, store, deleted } = setUp([grant]);
    await projector.enforce(keyOf(grant), relationshipsOf(grant));
    const edited = policyGrant('g');
    await projector.enforce(keyOf(grant), relationshipsOf(edited));
    expect(store.keys()).toEqual([tupleKey(consumerTuple())]);
    expect(store.writeCalls[1]?.map((update) => update.operation)).toEqual(['touch', 'delete']);
    expect(deleted).toEqual([{ keys: [tupleKey(consumerTuple(USER, 'file_consumer'))], by: keyOf(grant) }]);
  });

  it('takes over recorded state from a status: no write for what the status says is there', async () => {
    const grant = policyGrant('g');
    const { projector, store } = setUp([grant]);
    projector.adopt(keyOf(grant), grant, { relationships: relationshipsOf(grant) }, 'zt-from-status');
    expect(await projector.enforce(keyOf(grant), relationshipsOf(grant))).toBe('zt-from-status');
    expect(store.writeCalls).toHaveLength(0);
  });
});

describe('Projector.withdraw', () => {
  it('deletes the tuples of a revoked grant and returns the ZedToken of the delete', async () => {
    const grant = policyGrant('g');
    const { projector, store, cluster, grants } = setUp([grant]);
    await projector.enforce(keyOf(grant), relationshipsOf(grant));
    const revoked = policyGrant('g', { revokedAt: '2026-05-01T00:00:00Z' });
    grants.put(revoked);
    const { zedToken, deleted } = await projector.withdraw(keyOf(grant), cluster.grant(keyOf(grant)));
    expect(store.keys()).toEqual([]);
    expect(deleted).toBe(1);
    expect(zedToken).toBe('token-2');
  });

  it('deletes the candidates even when this process never wrote them (after a restart)', async () => {
    const grant = policyGrant('g', { revokedAt: '2026-05-01T00:00:00Z' });
    const { projector, store } = setUp([grant]);
    store.seed(consumerTuple());
    await projector.withdraw(keyOf(grant), grant);
    expect(store.keys()).toEqual([]);
  });

  it('does not delete twice: a withheld grant reconciled again writes nothing', async () => {
    const grant = policyGrant('g', { revokedAt: '2026-05-01T00:00:00Z' });
    const { projector, store } = setUp([grant]);
    await projector.withdraw(keyOf(grant), grant);
    await projector.withdraw(keyOf(grant), grant);
    expect(store.writeCalls).toHaveLength(1);
  });

  it('deletes what a grant gone from the cache had written, from its record of the last write alone', async () => {
    const grant = policyGrant('g');
    const { projector, store, grants } = setUp([grant]);
    await projector.enforce(keyOf(grant), relationshipsOf(grant));
    grants.remove(keyOf(grant));
    await projector.withdraw(keyOf(grant), undefined);
    expect(store.keys()).toEqual([]);
  });
});

describe('a tuple two grants project', () => {
  const at = (seconds: number) => ({
    creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString() as unknown as Date,
  });
  const groupSpec = (orgs: string[], revoked = false) => ({
    policyType: 'GROUP' as const,
    userId: undefined,
    constraints: { access: [{ accessType: 'api' }], subjects: { allowedOrgIds: orgs } },
    ...(revoked ? { revokedAt: '2026-05-01T00:00:00Z' } : {}),
  });
  const sharedKey = (org: string) =>
    `resource:urn=3Adx=3Acat=3Aitem=3Aweather-stations#api_consumer@organization:${org}#member`;

  it('stays when the revoked grant is withdrawn after the new grant was written', async () => {
    const old = policyGrant('old', groupSpec([ORG_A]), at(1));
    const renewed = policyGrant('renewed', groupSpec([ORG_A, ORG_B]), at(2));
    const { projector, store, grants } = setUp([old]);
    await projector.enforce(keyOf(old), relationshipsOf(old));
    grants.put(policyGrant('old', groupSpec([ORG_A], true), at(1)));
    grants.put(renewed);
    await projector.enforce(keyOf(renewed), relationshipsOf(renewed));
    await projector.withdraw(keyOf(old), grants.get(keyOf(old)));
    expect(store.keys()).toEqual([sharedKey(ORG_A), sharedKey(ORG_B)]);
  });

  it('stays when the revoked grant is withdrawn before the new grant is written', async () => {
    const old = policyGrant('old', groupSpec([ORG_A]), at(1));
    const renewed = policyGrant('renewed', groupSpec([ORG_A, ORG_B]), at(2));
    const { projector, store, grants, deleted } = setUp([old]);
    await projector.enforce(keyOf(old), relationshipsOf(old));
    grants.put(policyGrant('old', groupSpec([ORG_A], true), at(1)));
    grants.put(renewed);
    // The renewed grant is in the cache and enforceable: the old one's withdrawal leaves the tuple to it.
    await projector.withdraw(keyOf(old), grants.get(keyOf(old)));
    expect(store.keys()).toEqual([sharedKey(ORG_A)]);
    expect(deleted).toEqual([]);
    await projector.enforce(keyOf(renewed), relationshipsOf(renewed));
    expect(store.keys()).toEqual([sharedKey(ORG_A), sharedKey(ORG_B)]);
  });

  it("is not taken by the newer, conflicting grant's withdrawal", async () => {
    const older = policyGrant('older', {}, at(1));
    const newer = policyGrant('newer', {}, at(2));
    const { projector, store } = setUp([older, newer]);
    await projector.enforce(keyOf(older), relationshipsOf(older));
    await projector.withdraw(keyOf(newer), newer);
    expect(store.keys()).toEqual([tupleKey(consumerTuple())]);
  });

  it('goes when no enforceable grant wants it any more, and other grants on it are told', async () => {
    const grant = policyGrant('g');
    const other = policyGrant('other', { userId: OTHER_USER });
    const { projector, grants, deleted } = setUp([grant, other]);
    await projector.enforce(keyOf(grant), relationshipsOf(grant));
    grants.put(policyGrant('g', { revokedAt: '2026-05-01T00:00:00Z' }));
    await projector.withdraw(keyOf(grant), grants.get(keyOf(grant)));
    expect(deleted).toEqual([{ keys: [tupleKey(consumerTuple())], by: keyOf(grant) }]);
  });
});

describe('failures', () => {
  it('remembers nothing of a write that failed, so the next reconcile writes again', async () => {
    const grant = policyGrant('g');
    const { projector, store, lastWrites } = setUp([grant]);
    store.failNextWrite = new Error('SpiceDB down');
    await expect(projector.enforce(keyOf(grant), relationshipsOf(grant))).rejects.toThrow('SpiceDB down');
    expect(lastWrites.get(keyOf(grant))).toBeUndefined();
    await projector.enforce(keyOf(grant), relationshipsOf(grant));
    expect(store.keys()).toEqual([tupleKey(consumerTuple())]);
  });
});

describe('grants on one item, through the write batcher', () => {
  it('share one call: the lock of the item is let go once a write is queued', async () => {
    const grants = [USER, OTHER_USER].map((userId, index) => policyGrant(`g${index}`, { userId }));
    const { store, lastWrites, cluster } = setUp(grants);
    const batched = new Projector<PolicyGrant>({
      store: new WriteBatcher({ store, windowMs: 1 }),
      kind: testGrantKind(cluster),
      lastWrites,
      mutex: new KeyedMutex(),
      onTuplesDeleted: () => undefined,
      now: () => NOW,
    });
    const tokens = await Promise.all(
      grants.map((grant) => batched.enforce(keyOf(grant), relationshipsOf(grant))),
    );
    expect(store.writeCalls).toHaveLength(1);
    expect(store.keys()).toEqual([consumerTuple(), consumerTuple(OTHER_USER)].map(tupleKey).sort());
    expect(grants.map((grant) => lastWrites.get(keyOf(grant))?.zedToken)).toEqual(tokens);
  });
});
