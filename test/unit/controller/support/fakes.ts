import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import {
  GROUP_VERSION,
  MEMBERSHIP_KIND,
  RELATIONSHIPS_FINALIZER,
  type CatalogItem,
  type CatalogItemSpec,
  type Membership,
  type MembershipSpec,
  type PolicyGrant,
  type PolicyGrantSpec,
} from '../../../../src/api/v1alpha1/index.js';
import { ClusterView } from '../../../../src/controller/cluster-view.js';
import { GrantMetrics } from '../../../../src/controller/controller-metrics.js';
import { GrantKind, type GrantKindOptions } from '../../../../src/controller/grants/grant-kind.js';
import { KeyedMutex } from '../../../../src/controller/keyed-mutex.js';
import { LastWrites } from '../../../../src/controller/projected/last-writes.js';
import type { ProjectedKind, ProjectedObject } from '../../../../src/controller/projected/projected-kind.js';
import {
  ProjectedReconciler,
  type ProjectedReconcilerOptions,
} from '../../../../src/controller/projected/projected-reconciler.js';
import { Projector } from '../../../../src/controller/projected/projector.js';
import { createMetricsRegistry } from '../../../../src/observability/metrics.js';
import { silentLogger } from '../../../../src/runtime/logger.js';
import type { Indexer } from '../../../../src/kube/indexes.js';
import { grantCacheTransform } from '../../../../src/controller/grants/cached-grant.js';
import { InternPool } from '../../../../src/runtime/index.js';
import { ORGANISATION_LABEL } from '../../../../src/verdict/namespace-authorisation.js';
import { tupleKey } from '../../../../src/verdict/tuple-key.js';
import { GrpcCode, SpiceDBError } from '../../../../src/spicedb/errors.js';
import type {
  Precondition,
  ReadRelationshipsOptions,
  Relationship,
  RelationshipFilter,
  RelationshipPage,
  RelationshipUpdate,
} from '../../../../src/spicedb/client.js';
import { loadRegistry } from '../../../../src/spicedb/registry.js';

export const registry = loadRegistry();
export const ACL_NAMESPACE = 'policy-grant-system';
export const USER = '3f1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d';
export const OTHER_USER = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';
export const ORG_A = '0b9e4f1a-7c2d-4a8e-b3f6-5d1c9e2a7b40';
export const ORG_B = 'c4d5e6f7-0809-4a1b-8c2d-3e4f5a6b7c8d';
export const OWNER = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
export const ITEM_ID = 'urn:dx:cat:item:weather-stations';
export const ITEM_OBJECT_ID = 'urn=3Adx=3Acat=3Aitem=3Aweather-stations';
export const EXPIRY = '2099-01-31T00:00:00Z';
export const NOW = new Date('2026-06-01T12:00:00Z');

/**
 * An Indexer over a Map; indexes are evaluated on each lookup (fine for tests). `transform` is applied to
 * each object put, as the controller's informer applies its cache transform.
 */
export class MemoryStore<T extends KubernetesObject> implements Indexer<T> {
  private readonly objects = new Map<string, T>();
  private readonly indexes = new Map<string, (obj: T) => string[]>();

  constructor(
    objects: T[] = [],
    private readonly transform: (obj: T) => T = (obj) => obj,
  ) {
    objects.forEach((obj) => this.put(obj));
  }

  put(obj: T): void {
    const { namespace, name } = obj.metadata ?? {};
    this.objects.set(namespace ? `${namespace}/${name}` : (name ?? ''), this.transform(obj));
  }

  remove(key: string): void {
    this.objects.delete(key);
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  byIndex(name: string, value: string): T[] {
    const indexFunc = this.indexes.get(name);
    if (!indexFunc) throw new Error(`no index ${name}`);
    return this.list().filter((obj) => indexFunc(obj).includes(value));
  }

  addIndex(name: string, indexFunc: (obj: T) => string[]): void {
    this.indexes.set(name, indexFunc);
  }
}

export function grantSpec(overrides: Partial<PolicyGrantSpec> = {}): PolicyGrantSpec {
  return {
    policyType: 'INDIVIDUAL',
    userId: USER,
    itemId: ITEM_ID,
    itemType: 'DATABANK',
    expiryTime: EXPIRY,
    constraints: { access: [{ accessType: 'api' }] },
    ...overrides,
  };
}

/** The spec fields of a GROUP grant of access type api for `organisations`. */
export function groupFields(organisations: string[]): Partial<PolicyGrantSpec> {
  return {
    policyType: 'GROUP',
    userId: undefined,
    constraints: { access: [{ accessType: 'api' }], subjects: { allowedOrgIds: organisations } },
  };
}

let created = 0;

export function policyGrant(
  name: string,
  spec: Partial<PolicyGrantSpec> = {},
  metadata: Partial<PolicyGrant['metadata']> = {},
  status?: PolicyGrant['status'],
): PolicyGrant {
  created += 1;
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'PolicyGrant',
    metadata: {
      name,
      namespace: ACL_NAMESPACE,
      uid: `uid-${name}`,
      generation: 1,
      resourceVersion: String(created),
      creationTimestamp: '2026-01-01T00:00:00Z' as unknown as Date,
      ...metadata,
    },
    spec: grantSpec(spec),
    ...(status ? { status } : {}),
  };
}

export function catalogItem(name: string, spec: Partial<CatalogItemSpec> = {}): CatalogItem {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'CatalogItem',
    metadata: { name },
    spec: {
      itemId: ITEM_ID,
      itemType: 'DATABANK',
      ownerId: OWNER,
      organisationId: ORG_A,
      accessTypes: ['api', 'file', 'sub'],
      ...spec,
    },
  };
}

export function boundNamespace(name: string, organisationId: string): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { [ORGANISATION_LABEL]: organisationId } },
  };
}

/** A Membership in the ACL namespace, by default an organisation membership of USER in ORG_A. */
export function membership(
  name: string,
  spec: Partial<MembershipSpec> = {},
  metadata: Partial<V1ObjectMeta> = {},
): Membership {
  return {
    apiVersion: GROUP_VERSION,
    kind: MEMBERSHIP_KIND,
    metadata: { name, namespace: ACL_NAMESPACE, generation: 1, resourceVersion: '1', ...metadata },
    spec: { organisationId: ORG_A, userId: USER, ...spec },
  };
}

export interface TestCluster {
  cluster: ClusterView;
  grants: MemoryStore<PolicyGrant>;
  items: MemoryStore<CatalogItem>;
  namespaces: MemoryStore<KubernetesObject>;
}

export function testCluster(
  content: { grants?: PolicyGrant[]; items?: CatalogItem[]; namespaces?: KubernetesObject[] } = {},
): TestCluster {
  // Cached as the controller caches them: every test of the cluster reads compact records.
  const grants = new MemoryStore(content.grants ?? [], grantCacheTransform(new InternPool()));
  const items = new MemoryStore(content.items ?? [catalogItem('weather')]);
  const namespaces = new MemoryStore(content.namespaces ?? []);
  const cluster = new ClusterView({ grants, items, namespaces, registry, aclNamespace: ACL_NAMESPACE });
  return { cluster, grants, items, namespaces };
}

/**
 * The kube-apiserver as a projected kind's reconciler writes to it: stores what it is sent in `cache`, bumps
 * resourceVersion, and lets an object being deleted go with its last finalizer.
 */
export class FakeObjectWriter<T extends KubernetesObject & { metadata: V1ObjectMeta }, Status = unknown> {
  readonly calls: string[] = [];

  constructor(private readonly cache: MemoryStore<T>) {}

  async setFinalizer(object: T, present: boolean): Promise<T> {
    this.calls.push(present ? 'addFinalizer' : 'removeFinalizer');
    const { namespace, name } = object.metadata;
    if (!present && object.metadata.deletionTimestamp) {
      this.cache.remove(`${namespace}/${name}`);
      return object;
    }
    const finalizers = present ? [RELATIONSHIPS_FINALIZER] : [];
    return this.store({ ...object, metadata: { ...object.metadata, finalizers } });
  }

  async updateStatus(object: T, status: Status): Promise<T> {
    this.calls.push('updateStatus');
    return this.store({ ...object, status });
  }

  private store(object: T): T {
    const resourceVersion = String(Number(object.metadata.resourceVersion ?? '0') + 1);
    const stored = { ...object, metadata: { ...object.metadata, resourceVersion } };
    this.cache.put(stored);
    return stored;
  }
}

/** The grants of `cluster` as a projected kind; its Events, metrics and logs go nowhere unless given. */
export function testGrantKind(cluster: ClusterView, options: Partial<GrantKindOptions> = {}): GrantKind {
  return new GrantKind({
    cluster,
    events: { record: async () => undefined },
    metrics: new GrantMetrics(createMetricsRegistry(), () => cluster.allGrants()),
    logger: silentLogger,
    ...options,
  });
}

/**
 * The projector and reconciler of `kind` over `store`, as setupProjectedController builds them: every
 * SpiceDB error goes to `spiceDBErrors`, every deletion's keys to `deleted`.
 */
export function projectionMachine<T extends ProjectedObject, Outcome, Status, Reason extends string>(
  kind: ProjectedKind<T, Outcome, Status, Reason>,
  store: FakeRelationshipStore,
  writer: ProjectedReconcilerOptions<T, Outcome, Status, Reason>['writer'],
  options: { now?: () => Date; trustStatus?: () => boolean } = {},
) {
  const lastWrites = new LastWrites();
  const deleted: string[][] = [];
  const spiceDBErrors: unknown[] = [];
  const projector = new Projector<T>({
    store,
    kind,
    lastWrites,
    mutex: new KeyedMutex(),
    onTuplesDeleted: (keys) => void deleted.push(keys),
    ...(options.now ? { now: options.now } : {}),
  });
  const reconciler = new ProjectedReconciler({
    kind,
    projector,
    lastWrites,
    writer,
    logger: silentLogger,
    onSpiceDBError: (error) => void spiceDBErrors.push(error),
    trustStatus: options.trustStatus ?? (() => true),
    ...(options.now ? { now: options.now } : {}),
  });
  return { lastWrites, projector, reconciler, deleted, spiceDBErrors };
}

function matches(relationship: Relationship, filter: RelationshipFilter): boolean {
  const { subject } = filter;
  return (
    relationship.resource.type === filter.resourceType &&
    (filter.resourceId === undefined || relationship.resource.id === filter.resourceId) &&
    (filter.relation === undefined || relationship.relation === filter.relation) &&
    (subject === undefined ||
      (relationship.subject.type === subject.type &&
        (subject.id === undefined || relationship.subject.id === subject.id) &&
        (subject.relation === undefined || (relationship.subject.relation ?? '') === subject.relation)))
  );
}

/**
 * SpiceDB as far as the controller uses it: tuples by key, writes applied in order and checked against its
 * per-call limit, reads in pages from a snapshot. Records every call.
 */
export class FakeRelationshipStore {
  readonly tuples = new Map<string, Relationship>();
  /** Calls of ensureSchema; the first one writes. */
  schemaWrites = 0;
  readonly writeCalls: RelationshipUpdate[][] = [];
  readonly readCalls: { filter: RelationshipFilter; pageSize: number }[] = [];
  /** Thrown by the next write (once). */
  failNextWrite?: Error;
  /** Runs between the pages of a read: to change the cluster while a resync reads. */
  betweenPages?: () => void | Promise<void>;
  private revision = 0;

  constructor(readonly maxUpdatesPerCall = 1_000) {}

  seed(...relationships: Relationship[]): void {
    relationships.forEach((relationship) => this.tuples.set(tupleKey(relationship), relationship));
  }

  keys(): string[] {
    return [...this.tuples.keys()].sort();
  }

  async ensureSchema(): Promise<{ written: boolean }> {
    this.schemaWrites += 1;
    return { written: this.schemaWrites === 1 };
  }

  async writeRelationshipsInBatches(updates: readonly RelationshipUpdate[]): Promise<string | undefined> {
    if (this.failNextWrite) {
      const error = this.failNextWrite;
      this.failNextWrite = undefined;
      throw error;
    }
    for (let start = 0; start < updates.length; start += this.maxUpdatesPerCall) {
      const batch = updates.slice(start, start + this.maxUpdatesPerCall);
      const keys = batch.map((update) => tupleKey(update.relationship));
      if (new Set(keys).size !== keys.length) throw new Error('duplicate update in one call');
      this.writeCalls.push(batch);
      for (const { operation, relationship } of batch) {
        if (operation === 'touch') this.tuples.set(tupleKey(relationship), relationship);
        else this.tuples.delete(tupleKey(relationship));
      }
      this.revision += 1;
    }
    return updates.length === 0 ? undefined : `token-${this.revision}`;
  }

  async *readRelationships(
    filter: RelationshipFilter,
    options: ReadRelationshipsOptions = {},
  ): AsyncGenerator<RelationshipPage> {
    const pageSize = options.pageSize ?? 1_000;
    this.readCalls.push({ filter, pageSize });
    const snapshot = [...this.tuples.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, relationship]) => relationship)
      .filter((relationship) => matches(relationship, filter));
    for (let start = 0; start < snapshot.length; start += pageSize) {
      yield { relationships: snapshot.slice(start, start + pageSize), cursor: String(start + pageSize) };
      await this.betweenPages?.();
    }
  }
}

/** `resource:<item>#<relation>@user:<user>` with the grant's expiry. */
export function consumerTuple(
  userId = USER,
  relation = 'api_consumer',
  expiresAt = new Date(EXPIRY),
): Relationship {
  return {
    resource: { type: 'resource', id: ITEM_OBJECT_ID },
    relation,
    subject: { type: 'user', id: userId },
    expiresAt,
  };
}

/**
 * FakeRelationshipStore with the client's single-call write and its preconditions (checked atomically with the
 * write, FAILED_PRECONDITION when one fails): what FencedSpiceDB needs of SpiceDB.
 */
export class FakeSpiceDB extends FakeRelationshipStore {
  readonly preconditions: (readonly Precondition[])[] = [];

  async writeRelationships(
    updates: readonly RelationshipUpdate[],
    options: { preconditions?: readonly Precondition[] } = {},
  ): Promise<string> {
    const preconditions = options.preconditions ?? [];
    this.preconditions.push(preconditions);
    for (const { operation, filter } of preconditions) {
      const found = [...this.tuples.values()].some((relationship) => matches(relationship, filter));
      if (found !== (operation === 'mustMatch')) {
        throw new SpiceDBError('WriteRelationships', GrpcCode.FAILED_PRECONDITION, 'precondition failed');
      }
    }
    return (await this.writeRelationshipsInBatches(updates)) ?? '';
  }
}
