import {
  ACCESS_REQUEST_KIND,
  ACCESS_REQUEST_LABEL,
  ACCESS_REQUEST_RESOURCE,
  accessRequestState,
  GROUP_VERSION,
  type AccessRequest,
  type AccessRequestStatus,
  type CatalogItem,
} from '../../api/v1alpha1/index.js';
import type { Principal } from '../../auth/principal.js';
import { assertIfMatch, entityTag } from '../../http/entity-tags.js';
import { HttpError } from '../../http/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { AclCache } from '../acl-cache.js';
import { administersItem, assertHasUserId, lookupItem, ORG_ADMIN } from '../authorisation.js';
import type { KubeClient } from '../../kube/kube-client.js';
import type { ListingPage } from '../listing-route.js';
import { isNotFound, isPreconditionConflict } from '../../kube/api-error.js';
import { ObjectWriter } from '../../kube/object-writer.js';
import type { PolicyCreator } from '../policies/create-policies.js';
import type { GrantStore } from '../policies/grant-store.js';
import { compareGrants, utcTimestamp } from '../policies/policy-rows.js';
import type { AccessVerifier } from '../policies/verify-access.js';
import { untilCached } from '../read-your-write.js';
import { paths } from '../resources.js';
import { assertBelowQuota, type UserQuotas } from '../user-quotas.js';
import type {
  AccessRequestListingQuery,
  AccessRequestRow,
  CreateAccessRequestBody,
  DecideAccessRequestBody,
} from './access-request-schemas.js';
import { assertMayDecide, assertPending, maySee, type Standing } from './decision-rules.js';
import { hasRole } from '../../auth/principal.js';

export type AccessRequestCache = Pick<
  AclCache,
  | 'accessRequestByUid'
  | 'accessRequestsOf'
  | 'accessRequestsOnItem'
  | 'itemsWithId'
  | 'itemsOwnedBy'
  | 'itemsOfOrganisation'
  | 'grantByUid'
>;

export interface AccessRequestsOptions {
  kube: KubeClient;
  cache: AccessRequestCache;
  creator: Pick<PolicyCreator, 'create'>;
  grants: Pick<GrantStore, 'deleteGrant'>;
  verifier: Pick<AccessVerifier, 'verify'>;
  quotas: UserQuotas;
  namespace: string;
  now: () => Date;
  /** How long a write waits for the cache to show it, so that the caller's next GET does. */
  readYourWriteTimeoutMs: number;
}

/** A request as a read answers it: its row and its ETag. */
export interface ReadRequest {
  row: AccessRequestRow;
  etag: string;
}

export type Listing = ListingPage<AccessRequestRow>;

/**
 * The access-request lifecycle of the ACL API (docs/acl-access-requests.md, "Access requests"): a consumer asks, the
 * item's owner or an org_admin of its organisation approves or rejects, the consumer may withdraw. Every
 * decision is a write conditioned on the resourceVersion the caller's If-Match names, so of two racing
 * deciders one wins; approval creates the grant through POST /policy's path (PolicyCreator), claims and 409s
 * included, and is undone when the request changed under it.
 */
export class AccessRequests {
  /** Status writes go to the status subresource, as the controller's do, conditioned on the version read. */
  private readonly writer: ObjectWriter<AccessRequest>;

  constructor(private readonly options: AccessRequestsOptions) {
    this.writer = new ObjectWriter<AccessRequest>(options.kube, ACCESS_REQUEST_RESOURCE);
  }

  async create(principal: Principal, body: CreateAccessRequestBody): Promise<ReadRequest> {
    assertHasUserId(principal, 'ask for access');
    this.checkItem(body);
    this.assertNothingInTheWay(principal, body);
    const { kube, namespace, cache, quotas } = this.options;
    assertBelowQuota(quotas, 'accessRequests', cache.accessRequestsOf(principal.id).length);
    const created = await kube.call<AccessRequest>({
      method: 'POST',
      path: paths.accessRequests(namespace),
      body: {
        apiVersion: GROUP_VERSION,
        kind: ACCESS_REQUEST_KIND,
        metadata: { generateName: 'request-' },
        spec: { consumerId: principal.id, ...body },
      },
    });
    return this.readYourWrite(await this.markPending(created));
  }

  consumerListing(principal: Principal, query: AccessRequestListingQuery): Listing {
    return this.page(this.options.cache.accessRequestsOf(principal.id), query);
  }

  /** Requests on the items the caller owns; an org_admin's: on every item of their organisation too. */
  providerListing(principal: Principal, query: AccessRequestListingQuery): Listing {
    const { cache } = this.options;
    const items = [
      ...cache.itemsOwnedBy(principal.id),
      ...(hasRole(principal, ORG_ADMIN) && principal.organisationId
        ? cache.itemsOfOrganisation(principal.organisationId)
        : []),
    ];
    const itemIds = new Set(items.map((item) => item.spec.itemId));
    const requests = [...itemIds]
      .flatMap((itemId) => cache.accessRequestsOnItem(itemId))
      .filter((request) => this.standing(principal, request).decider);
    return this.page(requests, query);
  }

  /** 404 for anyone but the consumer and the deciders: the request's existence is theirs to know. */
  get(principal: Principal, id: string): ReadRequest {
    const request = this.options.cache.accessRequestByUid(id);
    if (!request || !maySee(this.standing(principal, request))) throw notFound(id);
    return this.read(request);
  }

  /**
   * PATCH: who may (403), If-Match present (428) and current (412), still PENDING (409), then the decision,
   * written conditioned on the version If-Match named.
   */
  async decide(
    principal: Principal,
    id: string,
    input: { ifMatch: string | undefined; body: DecideAccessRequestBody; log: Logger },
  ): Promise<ReadRequest> {
    const cached = this.options.cache.accessRequestByUid(id);
    if (!cached) throw notFound(id);
    const { body } = input;
    assertMayDecide(this.standing(principal, cached), body.status, id);
    const current = await this.fresh(cached);
    assertIfMatch(input.ifMatch, current.metadata.resourceVersion ?? '');
    assertPending(accessRequestState(current), id);
    const decision: AccessRequestStatus = {
      ...current.status,
      state: body.status,
      decidedBy: principal.id,
      decidedAt: this.options.now().toISOString(),
      ...(body.reason === undefined ? {} : { reason: body.reason }),
    };
    if (body.status !== 'APPROVED') return this.readYourWrite(await this.writeDecision(current, decision));
    const policyIds = await this.approve(principal, current, body.expiryTime, input.log);
    try {
      return this.readYourWrite(await this.writeDecision(current, { ...decision, policyIds }));
    } catch (error) {
      await this.undoApproval(policyIds, input.log);
      throw error;
    }
  }

  /** The grant asked for, created as POST /policy creates grants, by the decider, labelled with the request. */
  private async approve(
    principal: Principal,
    request: AccessRequest,
    expiryTime: string | undefined,
    log: Logger,
  ): Promise<string[]> {
    const { spec } = request;
    const expiry = expiryTime ?? spec.expiryTime;
    if (!(Date.parse(expiry) > this.options.now().getTime())) {
      throw new HttpError(
        'BadRequest',
        `expiryTime: the request asked for access until ${spec.expiryTime}, which has passed; approve with a later expiryTime`,
      );
    }
    const outcome = await this.options.creator.create({
      principal,
      items: [
        {
          policyType: 'INDIVIDUAL',
          userId: spec.consumerId,
          itemId: spec.itemId,
          itemType: spec.itemType,
          expiryTime: expiry,
          constraints: { access: spec.access },
        },
      ],
      idempotencyKey: undefined,
      labels: { [ACCESS_REQUEST_LABEL]: request.metadata.uid ?? '' },
      log,
    });
    return outcome.policyIds;
  }

  /** The request changed after the grants were made (a racing decision won): they go, the request stays. */
  private async undoApproval(policyIds: readonly string[], log: Logger): Promise<void> {
    const results = await Promise.allSettled(
      policyIds.map((policyId) => {
        const grant = this.options.cache.grantByUid(policyId);
        return this.options.grants.deleteGrant(grant?.metadata.name ?? '', policyId);
      }),
    );
    const failed = results.filter((result) => result.status === 'rejected');
    if (failed.length > 0)
      log.warn({ policyIds }, 'grants of an approval that lost its race were left behind');
  }

  /** The status write of a decision, conditioned on the version it was decided on: 412 when it changed. */
  private async writeDecision(request: AccessRequest, status: AccessRequestStatus): Promise<AccessRequest> {
    try {
      return await this.writer.updateStatus(request, status);
    } catch (error) {
      if (!isPreconditionConflict(error) && !isNotFound(error)) throw error;
      throw new HttpError(
        'PreconditionFailed',
        `access request ${request.metadata.uid ?? ''} changed while it was being decided; read it again`,
      );
    }
  }

  /**
   * A new request's PENDING state. The controller marks a request without a state PENDING too (one applied with
   * kubectl): when it came first, its write is this one's and the conflict is no failure.
   */
  private async markPending(created: AccessRequest): Promise<AccessRequest> {
    try {
      return await this.writer.updateStatus(created, { state: 'PENDING' });
    } catch (error) {
      if (!isPreconditionConflict(error)) throw error;
      const current = await this.fresh(created);
      if (current.status?.state !== 'PENDING') throw error;
      return current;
    }
  }

  /** The request as the apiserver has it now: the cache may lag behind the caller's last read. */
  private async fresh(cached: AccessRequest): Promise<AccessRequest> {
    const { kube, namespace } = this.options;
    try {
      return await kube.call<AccessRequest>({
        method: 'GET',
        path: paths.accessRequest(namespace, cached.metadata.name ?? ''),
      });
    } catch (error) {
      if (isNotFound(error)) throw notFound(cached.metadata.uid ?? '');
      throw error;
    }
  }

  private standing(principal: Principal, request: AccessRequest): Standing {
    const candidates = this.options.cache.itemsWithId(request.spec.itemId);
    return {
      consumer: request.spec.consumerId === principal.id,
      decider: candidates.length > 0 && candidates.every((item) => administersItem(principal, item)),
    };
  }

  /** The catalog says the item exists once, with this itemType and these access types. */
  private checkItem(body: CreateAccessRequestBody): CatalogItem {
    const lookup = lookupItem(this.options.cache.itemsWithId(body.itemId));
    if (lookup.kind === 'missing') {
      throw new HttpError('NotFound', `itemId: no CatalogItem has itemId ${body.itemId}`);
    }
    if (lookup.kind === 'ambiguous') {
      throw new HttpError(
        'Conflict',
        `itemId: itemId ${body.itemId} is ambiguous; access to it cannot be granted`,
      );
    }
    const { spec } = lookup.item;
    if (spec.itemType !== body.itemType) {
      throw new HttpError(
        'BadRequest',
        `itemType: item ${body.itemId} has itemType ${spec.itemType}, not ${body.itemType}`,
      );
    }
    body.access.forEach(({ accessType }, index) => {
      if (!spec.accessTypes.includes(accessType)) {
        throw new HttpError(
          'BadRequest',
          `access[${index}].accessType: item ${body.itemId} does not allow access type ${accessType} ` +
            `(allowed: ${spec.accessTypes.join(', ')})`,
        );
      }
    });
    return lookup.item;
  }

  /** 409 when the caller already has a pending request, or an effective grant, for an access type asked. */
  private assertNothingInTheWay(principal: Principal, body: CreateAccessRequestBody): void {
    const asked = new Set(body.access.map((entry) => entry.accessType));
    const pending = this.options.cache
      .accessRequestsOf(principal.id)
      .find(
        (request) =>
          request.spec.itemId === body.itemId &&
          accessRequestState(request) === 'PENDING' &&
          request.spec.access.some((entry) => asked.has(entry.accessType)),
      );
    if (pending) {
      throw new HttpError(
        'Conflict',
        `access request ${pending.metadata.uid ?? ''} of the caller on item ${body.itemId} is already pending`,
      );
    }
    const granted = this.effectiveAccessTypes(principal, body.itemId).filter((type) => asked.has(type));
    if (granted.length > 0) {
      throw new HttpError(
        'Conflict',
        `an active policy already gives the caller access type${granted.length > 1 ? 's' : ''} ` +
          `${granted.join(', ')} on item ${body.itemId}`,
      );
    }
  }

  /** The access types the caller's effective grants on the item give now (the one verdict, through verify). */
  private effectiveAccessTypes(principal: Principal, itemId: string): string[] {
    try {
      const { all } = this.options.verifier.verify(principal, principal.id, itemId);
      return all.flatMap((grant) => grant.constraints.access.map((entry) => entry.accessType));
    } catch (error) {
      if (error instanceof HttpError && error.kind === 'Forbidden') return [];
      throw error;
    }
  }

  private page(requests: readonly AccessRequest[], query: AccessRequestListingQuery): Listing {
    const ordered = [...new Map(requests.map((request) => [request.metadata.uid, request])).values()]
      .filter((request) => query.status === undefined || accessRequestState(request) === query.status)
      .sort(compareGrants);
    return {
      results: ordered
        .slice(query.offset, query.offset + query.limit)
        .map((request) => this.read(request).row),
      paginationInfo: { offset: query.offset, limit: query.limit, totalHits: ordered.length },
    };
  }

  private read(request: AccessRequest): ReadRequest {
    const { spec, metadata, status } = request;
    const etag = entityTag(metadata.resourceVersion ?? '');
    const row: AccessRequestRow = {
      requestId: metadata.uid ?? '',
      consumerId: spec.consumerId,
      itemId: spec.itemId,
      itemType: spec.itemType,
      access: spec.access,
      expiryTime: utcTimestamp(spec.expiryTime),
      ...(spec.purpose === undefined ? {} : { purpose: spec.purpose }),
      status: accessRequestState(request),
      createdAt: utcTimestamp(String(metadata.creationTimestamp ?? '')),
      ...(status?.decidedBy === undefined ? {} : { decidedBy: status.decidedBy }),
      ...(status?.decidedAt === undefined ? {} : { decidedAt: utcTimestamp(status.decidedAt) }),
      ...(status?.reason === undefined ? {} : { reason: status.reason }),
      policyIds: status?.policyIds ?? [],
      etag,
    };
    return { row, etag };
  }

  /** Waits (bounded) until the cache holds the written version, then answers it. */
  private async readYourWrite(written: AccessRequest): Promise<ReadRequest> {
    const uid = written.metadata.uid ?? '';
    const { cache, readYourWriteTimeoutMs } = this.options;
    await untilCached(
      () => cache.accessRequestByUid(uid)?.metadata.resourceVersion === written.metadata.resourceVersion,
      readYourWriteTimeoutMs,
    );
    return this.read(written);
  }
}

function notFound(id: string): HttpError {
  return new HttpError('NotFound', `no access request has id ${id}, or it is not the caller's to see`);
}
