import { describe, expect, it } from 'vitest';
import type { CatalogItem, PolicyGrant } from '../../../../src/api/v1alpha1/index.js';
import { toKubernetesTime } from '../../../../src/api/v1alpha1/index.js';
import type { CreateItem } from '../../../../src/acl/policy-schemas.js';
import { claimKeys, claimName, type ClaimData } from '../../../../src/acl/policies/grant-claims.js';
import {
  MAX_CLAIMS_PER_REQUEST,
  PolicyCreator,
  type CreateCache,
  type CreateSettings,
} from '../../../../src/acl/policies/create-policies.js';
import {
  CREATED_BY_ACL_API,
  CREATED_BY_LABEL,
  idempotentGrantName,
} from '../../../../src/acl/policies/grant-names.js';
import type { Principal } from '../../../../src/auth/principal.js';
import { HttpError } from '../../../../src/http/errors.js';
import { createLogger, type Logger } from '../../../../src/observability/logger.js';
import { KubeApiError } from '../../../../src/kube/index.js';
import { loadRegistry } from '../../../../src/spicedb/registry.js';
import { capturedLogger } from '../../http/support/serve.js';
import { FakeGrantStore, NAMESPACE, type StoreCall } from '../support/fake-grant-store.js';
import { sleep } from '../../../../dev/wait/sleep.js';

const OWNER = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const USER = '3f1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d';
const ITEM_ID = 'urn:dx:item:weather-stations';
const owner: Principal = { kind: 'user', id: OWNER, roles: new Set() };
const silent = createLogger({ level: 'silent' });

const catalogItem: CatalogItem = {
  apiVersion: 'acl.policygrant.dev/v1alpha1',
  kind: 'CatalogItem',
  metadata: { name: 'weather-stations' },
  spec: {
    itemId: ITEM_ID,
    itemType: 'DATABANK',
    accessTypes: ['api', 'file', 'sub'],
    ownerId: OWNER,
    organisationId: '0b9e4f1a-7c2d-4a8e-b3f6-5d1c9e2a7b40',
  },
};

/** The informer cache: the item, and grants applied with kubectl (found by claim key). */
function cacheWith(kubectlGrants: PolicyGrant[] = []): CreateCache {
  return {
    registry: loadRegistry(),
    aclNamespace: NAMESPACE,
    itemsWithId: (itemId) => (itemId === ITEM_ID ? [catalogItem] : []),
    organisationOfNamespace: () => undefined,
    grantsWithTupleKey: () => [],
    grantsWithClaimKey: () => kubectlGrants,
    waitForGrant: async () => true,
  };
}

function individual(accessTypes: string[], userId = USER): CreateItem {
  return {
    policyType: 'INDIVIDUAL',
    userId,
    itemId: ITEM_ID,
    itemType: 'DATABANK',
    expiryTime: '2099-01-01T00:00:00Z',
    constraints: { access: accessTypes.map((accessType) => ({ accessType })) },
  };
}

function group(orgIds: string[]): CreateItem {
  return {
    policyType: 'GROUP',
    itemId: ITEM_ID,
    itemType: 'DATABANK',
    expiryTime: '2099-01-01T00:00:00Z',
    constraints: { access: [{ accessType: 'api' }], subjects: { allowedOrgIds: orgIds } },
  };
}

const nameOf = (accessType: string, userId = USER) =>
  claimName({ subject: `user:${userId}`, itemId: ITEM_ID, accessType });
/** The grant name a create with this Idempotency-Key gives its first item. */
const grantOf = (key: string) => idempotentGrantName(OWNER, key, 0);

interface Answer {
  status: number;
  detail: string;
}

function creator(
  store: FakeGrantStore,
  settings: Partial<CreateSettings> = {},
  cache = cacheWith(),
): PolicyCreator {
  return new PolicyCreator(store, cache, {
    claimPendingTimeoutMs: 60_000,
    claimWaitMs: 5_000,
    readYourWriteTimeoutMs: 1_000,
    now: () => new Date(),
    ...settings,
  });
}

async function create(
  store: FakeGrantStore,
  items: CreateItem[],
  options: {
    key?: string;
    log?: Logger;
    settings?: Partial<CreateSettings>;
    cache?: CreateCache;
    principal?: Principal;
  } = {},
): Promise<Answer> {
  return creator(store, options.settings, options.cache)
    .create({
      principal: options.principal ?? owner,
      items,
      idempotencyKey: options.key,
      log: options.log ?? silent,
    })
    .then(
      () => ({ status: 201, detail: '' }),
      (error: unknown) => {
        if (error instanceof HttpError) return { status: error.status, detail: error.detail };
        throw error;
      },
    );
}

/**
 * The interleaving that made racing creates all lose: the first `count` claim creates are held until all
 * have arrived; then each claim's chosen winner creates it, and only after that do the others try theirs.
 * So every request holds one triple and finds the others pending for a contender.
 */
function crosswise(store: FakeGrantStore, count: number, winnerOf: Record<string, string>): void {
  const waiting: { call: StoreCall; go: () => void }[] = [];
  let open = false;
  store.before = (call) => {
    if (open || call.op !== 'createClaim') return;
    return new Promise<void>((go) => {
      waiting.push({ call, go });
      if (waiting.length < count) return;
      open = true;
      const winners = waiting.filter((entry) => winnerOf[entry.call.name] === entry.call.data?.grantName);
      for (const winner of winners) winner.go();
      setTimeout(() => waiting.filter((entry) => !winners.includes(entry)).forEach((entry) => entry.go()));
    });
  };
}

function pendingClaim(grantName: string, accessType: string, pendingSince: Date): ClaimData {
  return {
    subject: `user:${USER}`,
    itemId: ITEM_ID,
    accessType,
    grantName,
    state: 'pending',
    pendingSince: toKubernetesTime(pendingSince),
  };
}

describe('authority before item facts', () => {
  const stranger: Principal = { kind: 'user', id: USER, roles: new Set() };
  const cosAdmin: Principal = { kind: 'user', id: USER, roles: new Set(['cos_admin']) };
  const missing = { ...individual(['api']), itemId: 'urn:dx:item:nowhere' };
  const mistyped = { ...individual(['api']), itemType: 'MAP' };
  const notAllowed = individual(['api', 'stream']);

  it('a caller who may not grant on the item: one 403 for a missing item and for a mistyped one, and no write', async () => {
    const store = new FakeGrantStore();
    const answers = await Promise.all(
      [missing, mistyped, notAllowed, individual(['api'])].map((item) =>
        create(store, [item], { principal: stranger }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([403, 403, 403, 403]);
    expect(answers[0]?.detail.replace('urn:dx:item:nowhere', ITEM_ID)).toBe(answers[1]?.detail);
    expect(store.calls).toEqual([]);
  });

  it('a cos_admin learns the facts (404, 400), then may not create on a well-named item (403)', async () => {
    const store = new FakeGrantStore();
    const statuses = await Promise.all(
      [missing, mistyped, notAllowed, individual(['api'])].map(
        async (item) => (await create(store, [item], { principal: cosAdmin })).status,
      ),
    );
    expect(statuses).toEqual([404, 400, 400, 403]);
  });

  it('the owner learns the facts: 404 is no answer for them (no item to own), 400 names the field', async () => {
    const store = new FakeGrantStore();
    expect((await create(store, [missing])).status).toBe(403);
    expect(await create(store, [mistyped])).toMatchObject({
      status: 400,
      detail: expect.stringContaining('request[0].itemType'),
    });
  });
});

describe('racing creates: of requests that overlap, one always wins', () => {
  it('two identical creates, each first to one of the two triples: exactly one 201', async () => {
    const store = new FakeGrantStore();
    const [low, high] = [nameOf('api'), nameOf('file')].sort() as [string, string];
    crosswise(store, 4, { [low]: grantOf('A'), [high]: grantOf('B') });
    const answers = await Promise.all(
      ['A', 'B'].map((key) => create(store, [individual(['api', 'file'])], { key })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    const winner = answers[0]?.status === 201 ? grantOf('A') : grantOf('B');
    expect([...store.grants.keys()]).toEqual([winner]);
    for (const name of [low, high])
      expect(store.claimData(name)).toMatchObject({ grantName: winner, state: 'bound' });
    expect(answers.find((answer) => answer.status === 409)?.detail).toContain(
      `an active policy already gives user ${USER}`,
    );
  });

  it('three creates whose triples overlap pairwise and are claimed in a cycle: exactly one 201', async () => {
    const store = new FakeGrantStore();
    crosswise(store, 6, {
      [nameOf('api')]: grantOf('A'),
      [nameOf('file')]: grantOf('B'),
      [nameOf('sub')]: grantOf('C'),
    });
    const requests = { A: ['api', 'file'], B: ['file', 'sub'], C: ['sub', 'api'] };
    const answers = await Promise.all(
      Object.entries(requests).map(([key, accessTypes]) => create(store, [individual(accessTypes)], { key })),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(2);
    expect(store.grants.size).toBe(1);
    const [winner] = [...store.grants.values()];
    const winnerClaims = claimKeys(winner?.spec ?? individual([])).map(claimName);
    expect([...store.claims.keys()].sort()).toEqual(winnerClaims.sort());
  });

  it('a request waiting behind a contender that loses gets the claim: both ends of a chain win', async () => {
    // X wants api, Y api and file, Z file. Y holds api, Z holds file. Y loses to Z; X must not lose to Y.
    const store = new FakeGrantStore();
    crosswise(store, 4, { [nameOf('api')]: grantOf('Y'), [nameOf('file')]: grantOf('Z') });
    const [x, y, z] = await Promise.all([
      create(store, [individual(['api'])], { key: 'X' }),
      create(store, [individual(['api', 'file'])], { key: 'Y' }),
      create(store, [individual(['file'])], { key: 'Z' }),
    ]);
    expect([x?.status, y?.status, z?.status]).toEqual([201, 409, 201]);
    expect([...store.grants.keys()].sort()).toEqual([grantOf('X'), grantOf('Z')].sort());
    expect(store.claimData(nameOf('api'))).toMatchObject({ grantName: grantOf('X'), state: 'bound' });
    expect(store.claimData(nameOf('file'))).toMatchObject({ grantName: grantOf('Z'), state: 'bound' });
  });

  it('waits, re-reading, for a contender that never finishes, then answers 409 after claimWaitMs', async () => {
    const store = new FakeGrantStore();
    store.putClaim(nameOf('api'), pendingClaim('pg-elsewhere', 'api', new Date()));
    const answer = await create(store, [individual(['api'])], { settings: { claimWaitMs: 100 } });
    expect(answer.status).toBe(409);
    expect(answer.detail).toContain('is being created by a concurrent request');
    expect(store.callsOf('getClaim').length).toBeGreaterThan(2);
    expect(store.grants.size).toBe(0);
    expect(store.claimData(nameOf('api'))).toMatchObject({ grantName: 'pg-elsewhere', state: 'pending' });
  });

  it('uncontended, every claim is created at once, as before (one round trip, not one per claim)', async () => {
    const store = new FakeGrantStore();
    let inFlight = 0;
    let peak = 0;
    store.before = async (call) => {
      if (call.op !== 'createClaim') return;
      peak = Math.max(peak, ++inFlight);
      await sleep(5);
      inFlight--;
    };
    expect((await create(store, [individual(['api', 'file', 'sub'])])).status).toBe(201);
    expect(peak).toBe(3);
    expect(store.callsOf('createClaim')).toHaveLength(3);
    expect(store.callsOf('getClaim')).toHaveLength(0);
  });
});

describe('failure paths of a create', () => {
  it('takes over a pending claim abandoned longer than claimPendingTimeoutMs', async () => {
    const store = new FakeGrantStore();
    const abandoned = store.putClaim(
      nameOf('api'),
      pendingClaim('pg-dead', 'api', new Date(Date.now() - 61_000)),
    );
    expect((await create(store, [individual(['api'])], { key: 'K' })).status).toBe(201);
    expect(store.claimData(nameOf('api'))).toMatchObject({ grantName: grantOf('K'), state: 'bound' });
    const takeover = store.callsOf('replaceClaim')[0];
    expect(takeover?.data).toMatchObject({ grantName: grantOf('K'), state: 'pending' });
    expect(store.claims.get(nameOf('api'))?.metadata.resourceVersion).not.toBe(
      abandoned.metadata.resourceVersion,
    );
  });

  it('answers 409 when the claim keeps changing for every attempt, and writes no grant', async () => {
    const store = new FakeGrantStore();
    // Another request creates the claim just before each create, and deletes it just before each read.
    store.before = (call) => {
      if (call.op === 'createClaim') store.putClaim(call.name, pendingClaim('pg-flicker', 'api', new Date()));
      if (call.op === 'getClaim') store.claims.delete(call.name);
    };
    const answer = await create(store, [individual(['api'])]);
    expect(answer.status).toBe(409);
    expect(answer.detail).toContain('kept changing under concurrent requests');
    expect(store.callsOf('createClaim')).toHaveLength(5);
    expect(store.grants.size).toBe(0);
  });

  it('loses the claim at bind: 409, its grant deleted, the new holder’s claim left alone', async () => {
    const store = new FakeGrantStore();
    store.before = (call) => {
      if (call.op === 'replaceClaim' && call.data?.state === 'bound') {
        store.putClaim(call.name, { ...pendingClaim('pg-thief', 'api', new Date()), state: 'bound' });
      }
    };
    const answer = await create(store, [individual(['api'])]);
    expect(answer.status).toBe(409);
    expect(answer.detail).toContain('was taken by a concurrent request');
    expect(store.grants.size).toBe(0);
    expect(store.claimData(nameOf('api'))).toMatchObject({ grantName: 'pg-thief', state: 'bound' });
  });

  it('binds its claims while it waits for the cache to show the grant, not before', async () => {
    const store = new FakeGrantStore();
    let cacheAsked!: () => void;
    const waiting = new Promise<void>((resolve) => (cacheAsked = resolve));
    // The bind is held until the cache was asked: a create that bound first and waited after would hang here.
    store.before = (call) => (call.op === 'replaceClaim' ? waiting : undefined);
    const cache: CreateCache = {
      ...cacheWith(),
      waitForGrant: async () => {
        cacheAsked();
        return true;
      },
    };
    expect((await create(store, [individual(['api'])], { cache })).status).toBe(201);
    expect(store.claimData(nameOf('api'))).toMatchObject({ state: 'bound' });
  });

  it('a failed create rolls back its grants and claims; what the rollback cannot undo is logged', async () => {
    const store = new FakeGrantStore();
    const unavailable = new KubeApiError(503, 'ServiceUnavailable', 'etcd is away');
    store.before = (call) => {
      if (call.op === 'createGrant' && store.callsOf('createGrant').length === 2) throw unavailable;
      if (call.op === 'deleteGrant') throw new KubeApiError(500, 'InternalError', 'no delete today');
    };
    const logs = capturedLogger();
    const failure = await creator(store)
      .create({
        principal: owner,
        items: [individual(['api']), individual(['file'])],
        idempotencyKey: undefined,
        log: logs.logger,
      })
      .catch((error: unknown) => error);
    expect(failure).toBe(unavailable);
    expect(store.claims.size).toBe(0);
    expect(store.grants.size).toBe(1);
    const warning = logs.lines().find((line) => line.level === 'warn');
    expect(warning?.msg).toContain('rollback of a failed create left objects behind');
    expect(String(warning?.failures)).toContain('no delete today');
  });

  it(`needs at most ${MAX_CLAIMS_PER_REQUEST} claims: one more is a 400 before anything is written`, async () => {
    const orgs = (count: number) =>
      Array.from(
        { length: count },
        (_, index) => `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
      );
    const store = new FakeGrantStore();
    const tooMany = await create(store, [group(orgs(MAX_CLAIMS_PER_REQUEST + 1))]);
    expect(tooMany.status).toBe(400);
    expect(tooMany.detail).toContain(`needs ${MAX_CLAIMS_PER_REQUEST + 1} (subject, access type) pairs`);
    expect(store.calls).toHaveLength(0);
    expect((await create(store, [group(orgs(MAX_CLAIMS_PER_REQUEST))])).status).toBe(201);
    expect(store.claims.size).toBe(MAX_CLAIMS_PER_REQUEST);
  });
});

describe('the 409 rule counts effective grants only (the grant verdict)', () => {
  const kubectlGrant = (namespace: string): PolicyGrant => ({
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'PolicyGrant',
    metadata: { name: 'applied', namespace, uid: 'kubectl-uid', creationTimestamp: new Date(0) },
    spec: { ...individual(['api']), issuerId: OWNER },
  });

  it('a grant applied in a namespace not bound to the item organisation blocks nothing', async () => {
    const cache = cacheWith([kubectlGrant('somebody-elses')]);
    expect((await create(new FakeGrantStore(), [individual(['api'])], { cache })).status).toBe(201);
  });

  it('a grant applied elsewhere with the label the API puts on its grants blocks all the same: 409', async () => {
    const forged = kubectlGrant(NAMESPACE);
    forged.metadata.namespace = 'bound-to-the-item-organisation';
    forged.metadata.labels = { [CREATED_BY_LABEL]: CREATED_BY_ACL_API };
    const cache = {
      ...cacheWith([forged]),
      organisationOfNamespace: (namespace: string) =>
        namespace === forged.metadata.namespace ? catalogItem.spec.organisationId : undefined,
    };
    expect((await create(new FakeGrantStore(), [individual(['api'])], { cache })).status).toBe(409);
  });

  it('a grant applied in the ACL namespace is effective: 409', async () => {
    const cache = cacheWith([kubectlGrant(NAMESPACE)]);
    const answer = await create(new FakeGrantStore(), [individual(['api'])], { cache });
    expect(answer).toEqual({
      status: 409,
      detail: `an active policy already gives user ${USER} access type api on item ${ITEM_ID}`,
    });
  });

  it("a claim whose grant the verdict refuses (its item's type changed) is taken over", async () => {
    const store = new FakeGrantStore();
    expect((await create(store, [individual(['api'])])).status).toBe(201);
    const [holder] = store.grants.values();
    if (holder) holder.spec.itemType = 'DATASET';
    expect((await create(store, [individual(['api'])])).status).toBe(201);
    expect(store.claimData(nameOf('api'))?.grantName).not.toBe(holder?.metadata.name);
    expect((await create(store, [individual(['api'])])).status).toBe(409);
  });
});

describe('a grant the API made whose claim is missing (an upgrade from ConfigMap claims)', () => {
  /** A grant as the API created it, in its namespace, with no claim beside it. */
  async function unclaimedGrant(store: FakeGrantStore, revokedAt?: string): Promise<PolicyGrant> {
    const grant = await store.createGrant({
      name: 'pg-before-upgrade',
      labels: { [CREATED_BY_LABEL]: CREATED_BY_ACL_API },
      annotations: {},
      spec: { ...individual(['api']), issuerId: OWNER, ...(revokedAt ? { revokedAt } : {}) },
    });
    store.calls.length = 0;
    return grant;
  }

  it('a create finds it in the cache, gives it the claim (bound) and answers 409; later creates meet the claim', async () => {
    const store = new FakeGrantStore();
    const grant = await unclaimedGrant(store);
    const answer = await create(store, [individual(['api'])], { cache: cacheWith([grant]) });
    expect(answer).toEqual({
      status: 409,
      detail: `an active policy already gives user ${USER} access type api on item ${ITEM_ID}`,
    });
    expect(store.claimData(nameOf('api'))).toMatchObject({ grantName: grant.metadata.name, state: 'bound' });
    expect([...store.grants.keys()]).toEqual([grant.metadata.name]);
    expect((await create(store, [individual(['api'])])).status).toBe(409);
  });

  it('one the cache still shows effective but the apiserver has revoked (another replica) blocks nothing', async () => {
    const store = new FakeGrantStore();
    const cached = structuredClone(await unclaimedGrant(store, toKubernetesTime(new Date())));
    delete cached.spec.revokedAt;
    expect((await create(store, [individual(['api'])], { cache: cacheWith([cached]) })).status).toBe(201);
    expect(store.callsOf('getGrant').map((call) => call.name)).toContain(cached.metadata.name);
    expect(store.claimData(nameOf('api'))?.grantName).not.toBe(cached.metadata.name);
  });

  it('an existing claim is judged as before: no extra read for a grant the cache holds', async () => {
    const store = new FakeGrantStore();
    const grant = await unclaimedGrant(store);
    store.putClaim(nameOf('api'), { ...pendingClaim('pg-gone', 'api', new Date(0)), state: 'bound' });
    expect((await create(store, [individual(['api'])], { cache: cacheWith([grant]) })).status).toBe(201);
    expect(store.callsOf('getGrant').map((call) => call.name)).toEqual(['pg-gone']);
  });
});
