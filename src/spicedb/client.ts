import { v1 } from '@authzed/authzed-node';
import type { ClientReadableStream, Metadata } from '@grpc/grpc-js';
import { inSpan } from '../observability/tracing.js';
import { GrpcCode, SpiceDBError, toSpiceDBError } from './errors.js';
import { callMetadata, spicedbSpan } from './spicedb-span.js';

/** Object ids here are SpiceDB's: already encoded (object-id.ts). */
export interface ObjectRef {
  type: string;
  id: string;
}

export interface SubjectRef extends ObjectRef {
  /** e.g. `member` for organization#member; absent for a plain object. */
  relation?: string;
}

export interface Relationship {
  resource: ObjectRef;
  relation: string;
  subject: SubjectRef;
  expiresAt?: Date;
}

export interface RelationshipUpdate {
  /** touch: create or overwrite (expiration included); delete: remove if present. */
  operation: 'touch' | 'delete';
  relationship: Relationship;
}

export interface RelationshipFilter {
  resourceType: string;
  resourceId?: string;
  resourceIdPrefix?: string;
  relation?: string;
  /** `relation: ''` matches only subjects without a relation; absent matches any. */
  subject?: { type: string; id?: string; relation?: string };
}

/**
 * A condition SpiceDB checks atomically with a write: `mustMatch` fails the write unless some relationship
 * matches the filter, `mustNotMatch` unless none does. A failed precondition is gRPC FAILED_PRECONDITION.
 */
export interface Precondition {
  operation: 'mustMatch' | 'mustNotMatch';
  filter: RelationshipFilter;
}

export interface WriteOptions {
  /** Checked by SpiceDB in the same transaction as the write. */
  preconditions?: readonly Precondition[];
}

/**
 * minimizeLatency may answer from a slightly older snapshot; atLeastAsFresh and atExactSnapshot take a ZedToken
 * (SpiceDB refuses an exact snapshot it cannot serve: another datastore instance's, garbage-collected).
 */
export type Consistency =
  | { minimizeLatency: true }
  | { atLeastAsFresh: string }
  | { atExactSnapshot: string }
  | { fullyConsistent: true };

export interface CheckPermissionInput {
  resource: ObjectRef;
  permission: string;
  subject: SubjectRef;
  consistency?: Consistency;
}

export interface CheckPermissionResult {
  /** Only HAS_PERMISSION allows; conditional, no and unspecified answers deny. */
  allowed: boolean;
  checkedAt: string | undefined;
}

/** One check of a CheckBulkPermissions call: the call's consistency applies to all of them. */
export type BulkCheckItem = Omit<CheckPermissionInput, 'consistency'>;

/** What SpiceDB answered to one item of a CheckBulkPermissions call: its result, or its own error. */
export type BulkCheckAnswer = CheckPermissionResult | SpiceDBError;

export interface RelationshipPage {
  relationships: Relationship[];
  /** Resumes reading after this page (same filter, page size and consistency). */
  cursor: string | undefined;
}

export interface ReadRelationshipsOptions {
  /** At most SpiceDB's --max-read-relationships-limit (default 1000). */
  pageSize?: number;
  cursor?: string;
  consistency?: Consistency;
}

/** A LookupResources call: the resources of `resourceType` on which `subject` has `permission`. */
export interface LookupResourcesInput {
  resourceType: string;
  permission: string;
  subject: SubjectRef;
  consistency: Consistency;
  /** At most this many results; SpiceDB's cursor continues after them. */
  limit: number;
  cursor?: string;
}

export interface LookupResourcesPage {
  /** Resources with HAS_PERMISSION, in SpiceDB's order; conditional ones are left out (a deny). */
  resourceIds: string[];
  /** SpiceDB's results in this call (conditional ones too): fewer than the limit means the last page. */
  resultCount: number;
  /** Continues after this page, at the same snapshot. */
  cursor: string | undefined;
  /** The snapshot the page was read at. */
  lookedUpAt: string | undefined;
}

/** A LookupSubjects call: the subjects of `subjectType` that have `permission` on `resource`. */
export interface LookupSubjectsInput {
  resource: ObjectRef;
  permission: string;
  subjectType: string;
  consistency: Consistency;
}

export interface LookupSubjectsResult {
  /** Concrete subjects with HAS_PERMISSION (usersets expanded); wildcards and conditional ones left out. */
  subjectIds: string[];
  lookedUpAt: string | undefined;
}

export interface SpiceDBDeadlines {
  /** CheckPermission, and the health probe. */
  checkMs: number;
  /** One page of ReadRelationships, LookupResources or LookupSubjects. */
  readMs: number;
  /** WriteRelationships and DeleteRelationships. */
  writeMs: number;
  /** ReadSchema, WriteSchema and DiffSchema. */
  schemaMs: number;
}

export const DEFAULT_DEADLINES: SpiceDBDeadlines = {
  checkMs: 2_000,
  readMs: 15_000,
  writeMs: 10_000,
  schemaMs: 10_000,
};

/** SpiceDB's default --write-relationships-max-updates-per-call. */
export const DEFAULT_MAX_UPDATES_PER_WRITE = 1_000;

export interface SpiceDBClientOptions {
  /** host:port of SpiceDB's gRPC API. */
  endpoint: string;
  /** The preshared key (or an API token). */
  token: string;
  /** plaintext: loopback or a trusted mesh only; tls: system roots; or TLS trusting this CA (PEM). */
  transport: 'plaintext' | 'tls' | { caCertificate: Buffer };
  deadlines?: Partial<SpiceDBDeadlines>;
  maxUpdatesPerWrite?: number;
}

type GrpcCallback<T> = (error: unknown, value?: T) => void;
/** A server-streaming call: its messages, then `end`; a failed call emits `error` before any `end`. */
type ServerStream = ClientReadableStream<unknown>;

/** One message of a Watch: everything up to `changesThrough` has been delivered. */
export interface WatchEvent {
  /** The ZedToken of the revision this message brings the watcher to. */
  changesThrough: string;
  /** The relationships that changed in that revision (none for a checkpoint or a schema change). */
  updates: RelationshipUpdate[];
  /** The schema changed in that revision. */
  schemaUpdated: boolean;
  /** No changes: SpiceDB says the watcher has seen everything up to `changesThrough`. */
  checkpoint: boolean;
}

export interface WatchOptions {
  /** Deliver the changes after this ZedToken; absent: from SpiceDB's current revision. */
  startCursor?: string;
  /** Ends the watch (the iteration then simply stops). */
  signal?: AbortSignal;
}

const PERMISSIONSHIP_HAS_PERMISSION = v1.CheckPermissionResponse_Permissionship.HAS_PERMISSION;
const LOOKUP_HAS_PERMISSION = v1.LookupPermissionship.HAS_PERMISSION;

function deadlineIn(milliseconds: number): { deadline: Date } {
  return { deadline: new Date(Date.now() + milliseconds) };
}

function toConsistency(consistency: Consistency): v1.Consistency {
  if ('atLeastAsFresh' in consistency) {
    return v1.Consistency.create({
      requirement: {
        oneofKind: 'atLeastAsFresh',
        atLeastAsFresh: v1.ZedToken.create({ token: consistency.atLeastAsFresh }),
      },
    });
  }
  if ('atExactSnapshot' in consistency) {
    return v1.Consistency.create({
      requirement: {
        oneofKind: 'atExactSnapshot',
        atExactSnapshot: v1.ZedToken.create({ token: consistency.atExactSnapshot }),
      },
    });
  }
  if ('fullyConsistent' in consistency) {
    return v1.Consistency.create({ requirement: { oneofKind: 'fullyConsistent', fullyConsistent: true } });
  }
  return v1.Consistency.create({ requirement: { oneofKind: 'minimizeLatency', minimizeLatency: true } });
}

function toObjectReference({ type, id }: ObjectRef): v1.ObjectReference {
  return v1.ObjectReference.create({ objectType: type, objectId: id });
}

function toSubjectReference(subject: SubjectRef): v1.SubjectReference {
  return v1.SubjectReference.create({
    object: toObjectReference(subject),
    optionalRelation: subject.relation ?? '',
  });
}

function toBulkCheckItem({
  resource,
  permission,
  subject,
}: BulkCheckItem): v1.CheckBulkPermissionsRequestItem {
  return v1.CheckBulkPermissionsRequestItem.create({
    resource: toObjectReference(resource),
    permission,
    subject: toSubjectReference(subject),
  });
}

function fromBulkCheckPair(
  pair: v1.CheckBulkPermissionsPair,
  checkedAt: string | undefined,
): BulkCheckAnswer {
  const { response } = pair;
  if (response.oneofKind === 'item') {
    return { allowed: response.item.permissionship === PERMISSIONSHIP_HAS_PERMISSION, checkedAt };
  }
  if (response.oneofKind === 'error') {
    return toSpiceDBError('CheckBulkPermissions', {
      code: response.error.code,
      details: response.error.message,
    });
  }
  return new SpiceDBError(
    'CheckBulkPermissions',
    undefined,
    'answered an item with neither result nor error',
  );
}

function toTimestamp(date: Date): { seconds: string; nanos: number } {
  const milliseconds = date.getTime();
  const seconds = Math.floor(milliseconds / 1000);
  return { seconds: String(seconds), nanos: (milliseconds - seconds * 1000) * 1_000_000 };
}

function toApiRelationship(relationship: Relationship): v1.Relationship {
  return v1.Relationship.create({
    resource: toObjectReference(relationship.resource),
    relation: relationship.relation,
    subject: toSubjectReference(relationship.subject),
    ...(relationship.expiresAt ? { optionalExpiresAt: toTimestamp(relationship.expiresAt) } : {}),
  });
}

function fromApiRelationship(relationship: v1.Relationship | undefined): Relationship {
  const subject = relationship?.subject;
  const expiresAt = relationship?.optionalExpiresAt;
  return {
    resource: { type: relationship?.resource?.objectType ?? '', id: relationship?.resource?.objectId ?? '' },
    relation: relationship?.relation ?? '',
    subject: {
      type: subject?.object?.objectType ?? '',
      id: subject?.object?.objectId ?? '',
      ...(subject?.optionalRelation ? { relation: subject.optionalRelation } : {}),
    },
    ...(expiresAt
      ? { expiresAt: new Date(Number(expiresAt.seconds) * 1000 + Math.floor(expiresAt.nanos / 1e6)) }
      : {}),
  };
}

function fromApiUpdate(update: v1.RelationshipUpdate): RelationshipUpdate {
  return {
    operation: update.operation === v1.RelationshipUpdate_Operation.DELETE ? 'delete' : 'touch',
    relationship: fromApiRelationship(update.relationship),
  };
}

function fromWatchResponse(response: v1.WatchResponse): WatchEvent {
  return {
    changesThrough: response.changesThrough?.token ?? '',
    updates: response.updates.map(fromApiUpdate),
    schemaUpdated: response.schemaUpdated,
    checkpoint: response.isCheckpoint,
  };
}

function toRelationshipFilter(filter: RelationshipFilter): v1.RelationshipFilter {
  const { subject } = filter;
  return v1.RelationshipFilter.create({
    resourceType: filter.resourceType,
    optionalResourceId: filter.resourceId ?? '',
    optionalResourceIdPrefix: filter.resourceIdPrefix ?? '',
    optionalRelation: filter.relation ?? '',
    ...(subject
      ? {
          optionalSubjectFilter: v1.SubjectFilter.create({
            subjectType: subject.type,
            optionalSubjectId: subject.id ?? '',
            ...(subject.relation === undefined ? {} : { optionalRelation: { relation: subject.relation } }),
          }),
        }
      : {}),
  });
}

function toPrecondition({ operation, filter }: Precondition): v1.Precondition {
  return v1.Precondition.create({
    operation:
      operation === 'mustMatch'
        ? v1.Precondition_Operation.MUST_MATCH
        : v1.Precondition_Operation.MUST_NOT_MATCH,
    filter: toRelationshipFilter(filter),
  });
}

/** `items` in consecutive slices of at most `size` (WriteRelationships' per-call limit). */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** The reads: asked again, they change nothing, so an attempt lost with its connection may be made again. */
const RETRIED_READS = {
  'authzed.api.v1.PermissionsService': [
    'CheckPermission',
    'CheckBulkPermissions',
    'LookupResources',
    'LookupSubjects',
    'ReadRelationships',
  ],
  'authzed.api.v1.SchemaService': ['ReadSchema', 'DiffSchema'],
};

/**
 * gRPC's own retry policy (the service config of gRFC A6, which grpc-js implements) for the reads: a read that
 * fails UNAVAILABLE before any answer arrived (its connection reset by a SpiceDB pod that stops, or a new
 * connection refused by one whose endpoint the Service still lists) is made again on a fresh connection,
 * within the call's own deadline. Writes are not retried here: a write whose answer was lost may have
 * committed, and their callers (the controller's requeue) decide. The reconnect backoff stays below the retry
 * backoff, so that each attempt is made on a new connection (through a Service, to an endpoint picked anew)
 * rather than failed at once by a channel still backing off; the waits between attempts (0.4 s on average, at
 * most 0.75 s, well within a check's deadline) let the Service's endpoints drop a SpiceDB pod that stopped;
 * the throttle (A6's token bucket: retries stop after about 50 failed attempts in a row, and resume as reads
 * succeed) makes reads fail at once, closed, during an outage.
 */
const CHANNEL_OPTIONS = {
  'grpc.service_config': JSON.stringify({
    methodConfig: [
      {
        name: Object.entries(RETRIED_READS).flatMap(([service, methods]) =>
          methods.map((method) => ({ service, method })),
        ),
        retryPolicy: {
          maxAttempts: 5,
          initialBackoff: '0.05s',
          maxBackoff: '0.4s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
    // Retries stop while most reads fail (an outage, not a lost connection): they then fail at once, closed.
    retryThrottling: { maxTokens: 100, tokenRatio: 0.1 },
  }),
  'grpc.initial_reconnect_backoff_ms': 20,
  'grpc.max_reconnect_backoff_ms': 500,
};

function createGrpcClient(options: SpiceDBClientOptions): v1.ZedClientInterface {
  const { endpoint, token, transport } = options;
  // The library's default services to connect ahead (its enum is not exported).
  const preconnect = undefined;
  switch (transport) {
    case 'plaintext':
      return v1.NewClient(
        token,
        endpoint,
        v1.ClientSecurity.INSECURE_PLAINTEXT_CREDENTIALS,
        preconnect,
        CHANNEL_OPTIONS,
      );
    case 'tls':
      return v1.NewClient(token, endpoint, v1.ClientSecurity.SECURE, preconnect, CHANNEL_OPTIONS);
    default:
      return v1.NewClientWithCustomCert(
        token,
        endpoint,
        transport.caCertificate,
        preconnect,
        CHANNEL_OPTIONS,
      );
  }
}

/**
 * The project's one way to talk to SpiceDB: a long-lived gRPC client with a deadline on every call.
 * Failures surface as SpiceDBError; SpiceDBUnavailableError means SpiceDB could not serve the call at all.
 */
export class SpiceDBClient {
  private readonly grpc: v1.ZedClientInterface;
  private readonly deadlines: SpiceDBDeadlines;
  private readonly maxUpdatesPerWrite: number;

  constructor(options: SpiceDBClientOptions) {
    this.grpc = createGrpcClient(options);
    this.deadlines = { ...DEFAULT_DEADLINES, ...options.deadlines };
    this.maxUpdatesPerWrite = options.maxUpdatesPerWrite ?? DEFAULT_MAX_UPDATES_PER_WRITE;
  }

  close(): void {
    this.grpc.close();
  }

  async checkPermission(input: CheckPermissionInput): Promise<CheckPermissionResult> {
    const request = v1.CheckPermissionRequest.create({
      resource: toObjectReference(input.resource),
      permission: input.permission,
      subject: toSubjectReference(input.subject),
      consistency: toConsistency(input.consistency ?? { minimizeLatency: true }),
    });
    const response = await this.unary<v1.CheckPermissionResponse>(
      'CheckPermission',
      this.deadlines.checkMs,
      (metadata, options, done) => this.grpc.checkPermission(request, metadata, options, done),
    );
    return {
      allowed: response.permissionship === PERMISSIONSHIP_HAS_PERMISSION,
      checkedAt: response.checkedAt?.token,
    };
  }

  /**
   * One CheckBulkPermissions call, every item at `consistency`, within the check deadline. Answers in the items'
   * order: each its result (at the call's revision) or the SpiceDBError SpiceDB gave that item alone. A failure
   * of the whole call (deadline, unknown revision, SpiceDB down) throws.
   */
  async checkBulkPermissions(
    items: readonly BulkCheckItem[],
    consistency: Consistency,
  ): Promise<BulkCheckAnswer[]> {
    const request = v1.CheckBulkPermissionsRequest.create({
      consistency: toConsistency(consistency),
      items: items.map(toBulkCheckItem),
    });
    const response = await this.unary<v1.CheckBulkPermissionsResponse>(
      'CheckBulkPermissions',
      this.deadlines.checkMs,
      (metadata, options, done) => this.grpc.checkBulkPermissions(request, metadata, options, done),
    );
    if (response.pairs.length !== items.length) {
      throw new SpiceDBError(
        'CheckBulkPermissions',
        undefined,
        `answered ${response.pairs.length} pairs to ${items.length} items`,
      );
    }
    return response.pairs.map((pair) => fromBulkCheckPair(pair, response.checkedAt?.token));
  }

  /** One atomic WriteRelationships call; returns its ZedToken. At most maxUpdatesPerWrite updates. */
  async writeRelationships(
    updates: readonly RelationshipUpdate[],
    options: WriteOptions = {},
  ): Promise<string> {
    if (updates.length === 0 || updates.length > this.maxUpdatesPerWrite) {
      throw new RangeError(
        `writeRelationships takes 1 to ${this.maxUpdatesPerWrite} updates, not ${updates.length}`,
      );
    }
    const request = v1.WriteRelationshipsRequest.create({
      updates: updates.map(({ operation, relationship }) =>
        v1.RelationshipUpdate.create({
          operation:
            operation === 'touch'
              ? v1.RelationshipUpdate_Operation.TOUCH
              : v1.RelationshipUpdate_Operation.DELETE,
          relationship: toApiRelationship(relationship),
        }),
      ),
      optionalPreconditions: (options.preconditions ?? []).map(toPrecondition),
    });
    const response = await this.unary<v1.WriteRelationshipsResponse>(
      'WriteRelationships',
      this.deadlines.writeMs,
      (metadata, options, done) => this.grpc.writeRelationships(request, metadata, options, done),
    );
    return response.writtenAt?.token ?? '';
  }

  /**
   * Any number of updates in calls of at most maxUpdatesPerWrite, in order. Each call is atomic, the whole
   * is not. Returns the last call's ZedToken, or undefined when there was nothing to write.
   */
  async writeRelationshipsInBatches(
    updates: readonly RelationshipUpdate[],
    options: WriteOptions = {},
  ): Promise<string | undefined> {
    let zedToken: string | undefined;
    for (const batch of chunk(updates, this.maxUpdatesPerWrite)) {
      zedToken = await this.writeRelationships(batch, options);
    }
    return zedToken;
  }

  /** Deletes every relationship that matches, atomically; returns the ZedToken and how many went. */
  async deleteRelationships(
    filter: RelationshipFilter,
  ): Promise<{ deletedAt: string; deletedCount: number }> {
    const request = v1.DeleteRelationshipsRequest.create({
      relationshipFilter: toRelationshipFilter(filter),
    });
    const response = await this.unary<v1.DeleteRelationshipsResponse>(
      'DeleteRelationships',
      this.deadlines.writeMs,
      (metadata, options, done) => this.grpc.deleteRelationships(request, metadata, options, done),
    );
    return {
      deletedAt: response.deletedAt?.token ?? '',
      deletedCount: Number(response.relationshipsDeletedCount),
    };
  }

  /**
   * Pages through the matching relationships, one ReadRelationships call of at most pageSize per page, all
   * at the snapshot of the first page (SpiceDB pins it in the cursor). Default consistency: fully consistent.
   */
  async *readRelationships(
    filter: RelationshipFilter,
    options: ReadRelationshipsOptions = {},
  ): AsyncGenerator<RelationshipPage> {
    const pageSize = options.pageSize ?? 1_000;
    const base = {
      relationshipFilter: toRelationshipFilter(filter),
      consistency: toConsistency(options.consistency ?? { fullyConsistent: true }),
      optionalLimit: pageSize,
    };
    let cursor = options.cursor;
    for (;;) {
      const request = v1.ReadRelationshipsRequest.create({
        ...base,
        ...(cursor === undefined ? {} : { optionalCursor: v1.Cursor.create({ token: cursor }) }),
      });
      const responses = await this.readPage(request);
      cursor = responses.at(-1)?.afterResultCursor?.token;
      if (responses.length > 0) {
        yield {
          relationships: responses.map((response) => fromApiRelationship(response.relationship)),
          cursor,
        };
      }
      if (responses.length < pageSize || cursor === undefined) return;
    }
  }

  /** One page of LookupResources (SpiceDB pins the snapshot in its cursor; later pages name it exactly). */
  async lookupResources(input: LookupResourcesInput): Promise<LookupResourcesPage> {
    const request = v1.LookupResourcesRequest.create({
      consistency: toConsistency(input.consistency),
      resourceObjectType: input.resourceType,
      permission: input.permission,
      subject: toSubjectReference(input.subject),
      optionalLimit: input.limit,
      ...(input.cursor === undefined ? {} : { optionalCursor: v1.Cursor.create({ token: input.cursor }) }),
    });
    const responses = await this.stream<v1.LookupResourcesResponse>('LookupResources', (metadata, options) =>
      this.grpc.lookupResources(request, metadata, options),
    );
    return {
      resourceIds: responses
        .filter((response) => response.permissionship === LOOKUP_HAS_PERMISSION)
        .map((response) => response.resourceObjectId),
      resultCount: responses.length,
      cursor: responses.at(-1)?.afterResultCursor?.token,
      lookedUpAt: responses[0]?.lookedUpAt?.token,
    };
  }

  /**
   * Every subject of LookupSubjects in one call: SpiceDB (v1.57) implements no limit or cursor for it. Only the
   * ids are kept as the messages arrive, so an answer of 100,000 subjects holds 100,000 strings, not 100,000
   * decoded messages.
   */
  async lookupSubjects(input: LookupSubjectsInput): Promise<LookupSubjectsResult> {
    const request = v1.LookupSubjectsRequest.create({
      consistency: toConsistency(input.consistency),
      resource: toObjectReference(input.resource),
      permission: input.permission,
      subjectObjectType: input.subjectType,
    });
    const result: LookupSubjectsResult = { subjectIds: [], lookedUpAt: undefined };
    let first = true;
    await this.eachMessage<v1.LookupSubjectsResponse>(
      'LookupSubjects',
      (metadata, options) => this.grpc.lookupSubjects(request, metadata, options),
      (response) => {
        if (first) result.lookedUpAt = response.lookedUpAt?.token;
        first = false;
        const { subject } = response;
        if (subject?.permissionship === LOOKUP_HAS_PERMISSION && subject.subjectObjectId !== '*') {
          result.subjectIds.push(subject.subjectObjectId);
        }
      },
    );
    return result;
  }

  /**
   * SpiceDB's Watch: relationship changes, schema changes and checkpoints in commit order, from `startCursor`
   * on, until the signal aborts (the iteration then ends) or the stream fails (SpiceDBError). No deadline: the
   * stream lives as long as the caller wants it.
   */
  async *watch(options: WatchOptions = {}): AsyncGenerator<WatchEvent> {
    const { INCLUDE_RELATIONSHIP_UPDATES, INCLUDE_SCHEMA_UPDATES, INCLUDE_CHECKPOINTS } = v1.WatchKind;
    const request = v1.WatchRequest.create({
      optionalUpdateKinds: [INCLUDE_RELATIONSHIP_UPDATES, INCLUDE_SCHEMA_UPDATES, INCLUDE_CHECKPOINTS],
      ...(options.startCursor
        ? { optionalStartCursor: v1.ZedToken.create({ token: options.startCursor }) }
        : {}),
    });
    const { signal } = options;
    if (signal?.aborted) return;
    const stream = this.grpc.watch(request, { deadline: Infinity });
    const cancel = () => stream.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      for await (const response of stream) yield fromWatchResponse(response as v1.WatchResponse);
    } catch (error) {
      if (!signal?.aborted) throw toSpiceDBError('Watch', error);
    } finally {
      signal?.removeEventListener('abort', cancel);
      stream.cancel();
    }
  }

  /**
   * The schema text SpiceDB reports, or undefined when none was written yet. SpiceDB (measured on v1.56.2) can keep
   * reporting an earlier text after a rewrite (its schema takes effect all the same): compare schemas with
   * ensureSchema, which asks SpiceDB for a diff, never with this text.
   */
  async readSchema(): Promise<string | undefined> {
    return this.readSchemaWithin(this.deadlines.schemaMs);
  }

  async writeSchema(schema: string): Promise<string> {
    const response = await this.unary<v1.WriteSchemaResponse>(
      'WriteSchema',
      this.deadlines.schemaMs,
      (metadata, options, done) =>
        this.grpc.writeSchema(v1.WriteSchemaRequest.create({ schema }), metadata, options, done),
    );
    return response.writtenAt?.token ?? '';
  }

  /**
   * Writes the schema only when SpiceDB's differs from it. SpiceDB itself compares them (DiffSchema, against
   * the latest schema), so formatting and the order of definitions do not count; definitions, relations,
   * subject types with their traits, permission expressions and comments do. No schema yet: all differs.
   */
  async ensureSchema(schema: string): Promise<{ written: boolean; zedToken?: string }> {
    if ((await this.schemaDifferences(schema)) === 0) return { written: false };
    return { written: true, zedToken: await this.writeSchema(schema) };
  }

  /** Cheap reachability probe for readiness: throws SpiceDBError when SpiceDB cannot answer. */
  async health(): Promise<{ schemaWritten: boolean }> {
    return { schemaWritten: (await this.readSchemaWithin(this.deadlines.checkMs)) !== undefined };
  }

  private async readSchemaWithin(timeoutMs: number): Promise<string | undefined> {
    try {
      const response = await this.unary<v1.ReadSchemaResponse>(
        'ReadSchema',
        timeoutMs,
        (metadata, options, done) =>
          this.grpc.readSchema(v1.ReadSchemaRequest.create({}), metadata, options, done),
      );
      return response.schemaText;
    } catch (error) {
      if (error instanceof SpiceDBError && error.code === GrpcCode.NOT_FOUND) return undefined;
      throw error;
    }
  }

  private async schemaDifferences(schema: string): Promise<number> {
    // The default consistency (minimize latency) may compare with a schema several seconds old.
    const request = v1.DiffSchemaRequest.create({
      comparisonSchema: schema,
      consistency: toConsistency({ fullyConsistent: true }),
    });
    const response = await this.unary<v1.DiffSchemaResponse>(
      'DiffSchema',
      this.deadlines.schemaMs,
      (metadata, options, done) => this.grpc.diffSchema(request, metadata, options, done),
    );
    return response.diffs.length;
  }

  private readPage(request: v1.ReadRelationshipsRequest): Promise<v1.ReadRelationshipsResponse[]> {
    return this.stream<v1.ReadRelationshipsResponse>('ReadRelationships', (metadata, options) =>
      this.grpc.readRelationships(request, metadata, options),
    );
  }

  /** Every message of a server stream, in order (see eachMessage). */
  private async stream<T>(
    operation: string,
    call: (metadata: Metadata, options: { deadline: Date }) => ServerStream,
  ): Promise<T[]> {
    const responses: T[] = [];
    await this.eachMessage<T>(operation, call, (response) => responses.push(response));
    return responses;
  }

  /**
   * Each message of a server stream to `each` as it arrives, within the read deadline, in a client span when
   * tracing is on. Read from the stream's events, as authzed-node's own promise API does: an async iterator over
   * the stream would cost a promise and a turn of the microtask queue per message, a sixth of the CPU a search's
   * thousand messages take.
   */
  private eachMessage<T>(
    operation: string,
    call: (metadata: Metadata, options: { deadline: Date }) => ServerStream,
    each: (response: T) => void,
  ): Promise<void> {
    return inSpan(
      () => spicedbSpan(operation),
      () =>
        new Promise<void>((resolve, reject) => {
          const fail = (error: unknown) => reject(toSpiceDBError(operation, error));
          try {
            call(callMetadata(), deadlineIn(this.deadlines.readMs))
              .on('data', each)
              .on('error', fail)
              .on('end', () => resolve());
          } catch (error) {
            fail(error);
          }
        }),
    );
  }

  /** One unary call within `timeoutMs`, in a client span when tracing is on. */
  private unary<T>(
    operation: string,
    timeoutMs: number,
    call: (metadata: Metadata, options: { deadline: Date }, done: GrpcCallback<T>) => unknown,
  ): Promise<T> {
    return inSpan(
      () => spicedbSpan(operation),
      () =>
        new Promise<T>((resolve, reject) => {
          const done: GrpcCallback<T> = (error, value) => {
            if (error || value === undefined) {
              reject(toSpiceDBError(operation, error ?? new Error('empty response')));
            } else {
              resolve(value);
            }
          };
          try {
            call(callMetadata(), deadlineIn(timeoutMs), done);
          } catch (error) {
            reject(toSpiceDBError(operation, error));
          }
        }),
    );
  }
}
