import {
  toKubernetesTime,
  type CatalogItem,
  type PolicyGrant,
  type PolicyGrantSpec,
} from '../../api/v1alpha1/index.js';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import type { Logger } from '../../observability/logger.js';
import { Backoff } from '../../runtime/backoff.js';
import { sleep } from '../../runtime/timing.js';
import { GrantEvaluator, type GrantView } from '../../verdict/grant-verdict.js';
import type { AclCache } from '../acl-cache.js';
import type { CreateItem } from '../policy-schemas.js';
import { assertHasUserId, lookupItem, mayCreateOn, mayLearnItemFacts } from '../authorisation.js';
import {
  claimKeys,
  claimName,
  describeSubject,
  isInFlight,
  judgeClaim,
  type ClaimData,
  type ClaimKey,
  type StoredClaim,
} from './grant-claims.js';
import { settleAll, valuesOrThrow } from '../concurrency.js';
import {
  CREATED_BY_ACL_API,
  CREATED_BY_LABEL,
  madeByAclApi,
  REQUEST_HASH_ANNOTATION,
  idempotentGrantName,
  randomGrantName,
  requestHash,
} from './grant-names.js';
import type { GrantStore } from './grant-store.js';
import { isAlreadyExists, isNotFound, isPreconditionConflict } from '../../kube/api-error.js';

/** Claims one request may need (subjects × access types over all its items). */
export const MAX_CLAIMS_PER_REQUEST = 1000;
/** Writes one request has in flight at once. */
const WRITE_CONCURRENCY = 8;
/** Attempts at one claim when other requests keep changing it. */
const CLAIM_ATTEMPTS = 5;
/** How long one create waits, in all, for contenders' pending claims to be bound or released. */
export const DEFAULT_CLAIM_WAIT_MS = 5_000;
/** First and longest pause between two reads of a claim a contender holds pending. */
const FIRST_PAUSE_MS = 10;
const LONGEST_PAUSE_MS = 200;

/** The writes and reads a create makes (a GrantStore; a fake in unit tests). */
export type CreateStore = Pick<
  GrantStore,
  'createClaim' | 'getClaim' | 'replaceClaim' | 'deleteClaim' | 'createGrant' | 'getGrant' | 'deleteGrant'
>;

/** What a create reads from the informer cache: the items, the grants in the way, the verdict's view. */
export type CreateCache = GrantView & Pick<AclCache, 'grantsWithClaimKey' | 'waitForGrant'>;

export interface CreateSettings {
  /** A pending claim without its grant is taken for abandoned after this long (its creator died). */
  claimPendingTimeoutMs: number;
  /** How long a create waits, in all, for claims that contenders hold pending (then 409). */
  claimWaitMs: number;
  /** How long a create waits for its informer to see the new grants (read-your-write). */
  readYourWriteTimeoutMs: number;
  now: () => Date;
}

export interface CreateInput {
  principal: Principal;
  items: readonly CreateItem[];
  idempotencyKey: string | undefined;
  log: Logger;
  /** More labels for the grants, e.g. the access request an approval creates them for. */
  labels?: Record<string, string>;
}

export interface CreateOutcome {
  policyIds: string[];
  /** True when an Idempotency-Key retry found the grants of its first answer. */
  replayed: boolean;
}

interface PlannedClaim {
  name: string;
  key: ClaimKey;
  grantName: string;
}

interface PlannedGrant {
  name: string;
  spec: PolicyGrantSpec;
  claims: PlannedClaim[];
}

/** A claim this request holds, with the resourceVersion it last saw; `mine` when it created or took it. */
interface HeldClaim {
  planned: PlannedClaim;
  resourceVersion: string;
  mine: boolean;
}

type ClaimOutcome = { held: HeldClaim } | Blocked;
type Blocked = { blocked: PlannedClaim; why: 'active' | 'in-flight' };

/**
 * POST /policy: checks every item against its CatalogItem and the caller, then, all or none,
 * 1. claims every (subject, item, access type) by creating its claim object (taking over claims whose
 *    grant is revoked, expired or gone, and waiting for claims other requests hold pending),
 * 2. creates the PolicyGrants,
 * 3. binds the claims (pending → bound, conditioned on the resourceVersion each claim had when claimed),
 *    and meanwhile waits until the informer has the new grants, so the caller's next listing shows them.
 * Any failure deletes what this request created and answers the failure.
 */
export class PolicyCreator {
  constructor(
    private readonly store: CreateStore,
    private readonly cache: CreateCache,
    private readonly settings: CreateSettings,
  ) {}

  async create(input: CreateInput): Promise<CreateOutcome> {
    const { principal, items, idempotencyKey } = input;
    assertHasUserId(principal, 'issue grants');
    const plan = this.plan(principal, items, idempotencyKey);
    const hash = idempotencyKey === undefined ? undefined : requestHash(items);
    if (hash !== undefined) {
      const replay = await this.replay(plan, hash, idempotencyKey as string);
      if (replay) return { policyIds: replay, replayed: true };
    }
    this.rejectKubectlConflicts(plan);
    const transaction = new CreateTransaction(this.store, this.cache, this.settings, input.log);
    try {
      const grants = await transaction.claimAndCreate(plan, {
        labels: { ...input.labels, [CREATED_BY_LABEL]: CREATED_BY_ACL_API },
        annotations: hash === undefined ? {} : { [REQUEST_HASH_ANNOTATION]: hash },
        idempotencyKey,
      });
      // Independent: binding answers contenders, the cache the caller's next read; a failed bind rolls back.
      await Promise.all([transaction.bindAll(), this.awaitCache(grants, input.log)]);
      return { policyIds: grants.map((grant) => grant.metadata.uid ?? ''), replayed: false };
    } catch (error) {
      await transaction.rollback();
      throw error;
    }
  }

  /** Validates items against the catalog and the caller; names the grants; lists their claims. */
  private plan(principal: Principal, items: readonly CreateItem[], key: string | undefined): PlannedGrant[] {
    const claimOwners = new Map<string, number>();
    const plan = items.map((item, index): PlannedGrant => {
      this.checkItem(principal, item, index);
      const name = key === undefined ? randomGrantName() : idempotentGrantName(principal.id, key, index);
      const claims = claimKeys(item).map((claimKey) => {
        const claim = { name: claimName(claimKey), key: claimKey, grantName: name };
        const earlier = claimOwners.get(claim.name);
        if (earlier !== undefined) {
          throw new HttpError(
            'BadRequest',
            `request[${index}] repeats request[${earlier}]: both give ${describeSubject(claimKey.subject)} ` +
              `access type ${claimKey.accessType} on item ${claimKey.itemId}`,
          );
        }
        claimOwners.set(claim.name, index);
        return claim;
      });
      return { name, spec: { ...item, issuerId: principal.id }, claims };
    });
    if (claimOwners.size > MAX_CLAIMS_PER_REQUEST) {
      throw new HttpError(
        'BadRequest',
        `request: needs ${claimOwners.size} (subject, access type) pairs over all items; at most ` +
          `${MAX_CLAIMS_PER_REQUEST} per request`,
      );
    }
    return plan;
  }

  /** Authority first (docs/acl-grants.md, "Authority before item facts"), then the item against the catalog. */
  private checkItem(principal: Principal, item: CreateItem, index: number): CatalogItem {
    const candidates = this.cache.itemsWithId(item.itemId);
    if (!mayLearnItemFacts(principal, candidates)) throw mayNotGrant(item, index);
    const lookup = lookupItem(candidates);
    if (lookup.kind === 'missing') {
      throw new HttpError('NotFound', `request[${index}].itemId: no CatalogItem has itemId ${item.itemId}`);
    }
    if (lookup.kind === 'ambiguous') {
      throw new HttpError(
        'Conflict',
        `request[${index}].itemId: itemId ${item.itemId} is ambiguous: CatalogItems ` +
          `${lookup.names.join(' and ')} both have it; grants on it are refused until one is removed`,
      );
    }
    const catalogItem = lookup.item;
    if (catalogItem.spec.itemType !== item.itemType) {
      throw new HttpError(
        'BadRequest',
        `request[${index}].itemType: item ${item.itemId} has itemType ${catalogItem.spec.itemType}, not ${item.itemType}`,
      );
    }
    const allowed = new Set(catalogItem.spec.accessTypes);
    item.constraints.access.forEach(({ accessType }, accessIndex) => {
      if (!allowed.has(accessType)) {
        throw new HttpError(
          'BadRequest',
          `request[${index}].constraints.access[${accessIndex}].accessType: item ${item.itemId} does not ` +
            `allow access type ${accessType} (allowed: ${catalogItem.spec.accessTypes.join(', ')})`,
        );
      }
    });
    if (!mayCreateOn(principal, catalogItem)) throw mayNotGrant(item, index);
    return catalogItem;
  }

  /**
   * An Idempotency-Key retry: when every grant of the plan exists, made from the same request, the first
   * answer is given again; a grant made from another request under the same key is a 409. Anything else
   * (no grant yet, or some: a twin is still at work) goes through the normal path, where the twin's claims
   * and grants count as this request's own.
   */
  private async replay(plan: PlannedGrant[], hash: string, key: string): Promise<string[] | undefined> {
    const existing = valuesOrThrow(
      await settleAll(plan, WRITE_CONCURRENCY, (grant) => this.store.getGrant(grant.name)),
    );
    if (existing.some((grant) => grant && grant.metadata.annotations?.[REQUEST_HASH_ANNOTATION] !== hash)) {
      throw idempotencyKeyReused(key);
    }
    if (existing.some((grant) => grant === undefined)) return undefined;
    return (existing as PolicyGrant[]).map((grant) => grant.metadata.uid ?? '');
  }

  /**
   * Grants applied with kubectl have no claims. The cache tells about those (best effort: a kubectl apply
   * racing this request is not seen; the controller then refuses the younger grant with reason Conflict).
   * Only effective ones count: a grant the controller refuses (in a namespace not bound to the item's
   * organisation, say) gives nothing, so it blocks nothing.
   */
  private rejectKubectlConflicts(plan: PlannedGrant[]): void {
    const evaluator = new GrantEvaluator(this.cache, this.settings.now());
    const blocked = plan.flatMap((grant) =>
      grant.claims.filter((claim) =>
        this.cache
          .grantsWithClaimKey(claim.key)
          .some(
            (other) => !madeByAclApi(other, this.cache.aclNamespace) && evaluator.evaluate(other).enforce,
          ),
      ),
    );
    if (blocked.length > 0)
      throw conflict(blocked.map((claim) => ({ blocked: claim, why: 'active' as const })));
  }

  private async awaitCache(grants: PolicyGrant[], log: Logger): Promise<void> {
    const seen = await Promise.all(
      grants.map((grant) =>
        this.cache.waitForGrant(
          grant.metadata.namespace ?? '',
          grant.metadata.name ?? '',
          (cached) => cached.metadata.uid === grant.metadata.uid,
          this.settings.readYourWriteTimeoutMs,
        ),
      ),
    );
    if (seen.includes(false)) {
      log.warn({ timeoutMs: this.settings.readYourWriteTimeoutMs }, 'created grants not yet in the cache');
    }
  }
}

/** The writes of one create, and what they left, so that a failure can undo exactly them. */
class CreateTransaction {
  private readonly heldClaims: HeldClaim[] = [];
  private readonly createdGrants: PolicyGrant[] = [];

  constructor(
    private readonly store: CreateStore,
    private readonly cache: CreateCache,
    private readonly settings: CreateSettings,
    private readonly log: Logger,
  ) {}

  async claimAndCreate(
    plan: PlannedGrant[],
    metadata: {
      labels: Record<string, string>;
      annotations: Record<string, string>;
      idempotencyKey?: string;
    },
  ): Promise<PolicyGrant[]> {
    await this.claimAll(plan.flatMap((grant) => grant.claims));
    const grants = await settleAll(plan, WRITE_CONCURRENCY, (grant) => this.createGrant(grant, metadata));
    return valuesOrThrow(grants);
  }

  /** Binds every claim held, once the grants exist. */
  async bindAll(): Promise<void> {
    valuesOrThrow(await settleAll(this.heldClaims, WRITE_CONCURRENCY, (held) => this.bind(held)));
  }

  /** Deletes the grants and claims this request created or took over; failures are logged. */
  async rollback(): Promise<void> {
    const results = await Promise.allSettled([
      ...this.createdGrants.map((grant) =>
        this.store.deleteGrant(grant.metadata.name ?? '', grant.metadata.uid ?? ''),
      ),
      ...this.heldClaims
        .filter((held) => held.mine)
        .map((held) => this.store.deleteClaim(held.planned.name, held.resourceVersion)),
    ]);
    const failures = results.filter((result) => result.status === 'rejected');
    if (failures.length > 0) {
      this.log.warn(
        { failures: failures.map((failure) => String((failure as PromiseRejectedResult).reason)) },
        'rollback of a failed create left objects behind; their claims are taken over once vacant',
      );
    }
  }

  private claimData(planned: PlannedClaim): ClaimData {
    return {
      ...planned.key,
      grantName: planned.grantName,
      state: 'pending',
      pendingSince: toKubernetesTime(this.settings.now()),
    };
  }

  /**
   * Claims every triple, so that of any requests that overlap one always wins (docs/acl-grants.md, "Racing
   * creates"). First all at once, waiting for nobody: uncontended, that is all there is, as fast as ever.
   * An active grant in the way ends it (409). Claims a contender still holds pending are waited for, and
   * only in one global order, the order of claim names: what this request holds beyond the first such
   * claim is given back, then the rest is claimed one by one in that order. A request only ever waits for a
   * claim greater than every claim it holds, so waiting has no cycle: the contender holding the greatest
   * claim never waits and completes, and a request waiting behind a contender that loses gets the claim.
   */
  private async claimAll(claims: readonly PlannedClaim[]): Promise<void> {
    const ordered = [...claims].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const outcomes = valuesOrThrow(
      await settleAll(ordered, WRITE_CONCURRENCY, async (claim) => this.keep(await this.acquire(claim))),
    );
    const blocked = outcomes.filter((outcome): outcome is Blocked => 'blocked' in outcome);
    if (blocked.some((outcome) => outcome.why === 'active')) throw conflict(blocked);
    const first = outcomes.findIndex((outcome) => 'blocked' in outcome);
    if (first === -1) return;
    const later = new Set(ordered.slice(first + 1));
    await this.release(this.heldClaims.filter((held) => later.has(held.planned)));
    const waitBudget = new WaitBudget(this.settings.claimWaitMs);
    for (const claim of ordered.slice(first)) {
      const outcome = this.keep(await this.acquire(claim, waitBudget));
      if ('blocked' in outcome) throw conflict([outcome]);
    }
  }

  /** Records a held claim at once, so that a later failure rolls it back. */
  private keep(outcome: ClaimOutcome): ClaimOutcome {
    if ('held' in outcome) this.heldClaims.push(outcome.held);
    return outcome;
  }

  /** Gives claims back before claiming them again in order; they are forgotten only once deleted. */
  private async release(held: readonly HeldClaim[]): Promise<void> {
    const results = await settleAll(held, WRITE_CONCURRENCY, async (claim) => {
      if (claim.mine) await this.store.deleteClaim(claim.planned.name, claim.resourceVersion);
      this.heldClaims.splice(this.heldClaims.indexOf(claim), 1);
    });
    valuesOrThrow(results);
  }

  /** Creates the claim, or judges the one that exists; waits for contenders only with `waitBudget`. */
  private async acquire(planned: PlannedClaim, waitBudget?: WaitBudget): Promise<ClaimOutcome> {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      let outcome: ClaimOutcome | 'changed';
      try {
        const created = await this.store.createClaim(planned.name, this.claimData(planned));
        outcome = await this.adoptUnclaimedGrant({
          planned,
          resourceVersion: created.metadata.resourceVersion,
          mine: true,
        });
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        outcome = await this.judgeExisting(planned, waitBudget);
      }
      if (outcome !== 'changed') return outcome;
    }
    throw new HttpError(
      'Conflict',
      `the claim on ${describeClaim(planned.key)} kept changing under concurrent requests; retry`,
    );
  }

  /**
   * Reads the existing claim and decides; while a contender holds it pending, reads it again until it is
   * bound or released or the wait budget is spent. 'changed' when the claim went away or another request took it
   * over first: the caller tries again.
   */
  private async judgeExisting(
    planned: PlannedClaim,
    waitBudget?: WaitBudget,
  ): Promise<ClaimOutcome | 'changed'> {
    for (;;) {
      const existing = await this.store.getClaim(planned.name);
      if (!existing) return 'changed';
      const claim = existing.spec;
      const resourceVersion = existing.metadata.resourceVersion;
      if (claim.grantName === planned.grantName) return { held: { planned, resourceVersion, mine: false } };
      const now = this.settings.now();
      if (isInFlight(claim, now, this.settings.claimPendingTimeoutMs)) {
        if (waitBudget && (await waitBudget.pause())) continue;
        return { blocked: planned, why: 'in-flight' };
      }
      const holder = claim.grantName ? await this.store.getGrant(claim.grantName) : undefined;
      const verdict = judgeClaim({
        claim,
        holderEffective: holder !== undefined && this.isEffective(holder, now),
        ownGrantName: planned.grantName,
        now,
        pendingTimeoutMs: this.settings.claimPendingTimeoutMs,
      });
      if (verdict !== 'vacant') return { blocked: planned, why: 'active' };
      return this.takeOver(planned, existing);
    }
  }

  /**
   * A claim this request has just created, where there was none, may still be in the way of an effective
   * grant the API made earlier, whose claim went missing: an upgrade from the release that kept claims in
   * ConfigMaps, or a rollback that deleted a claim but failed to delete its grant. Such a grant is in the cache
   * (read back from the apiserver to be sure): the claim is given to it, bound, and the triple is blocked.
   */
  private async adoptUnclaimedGrant(held: HeldClaim): Promise<ClaimOutcome | 'changed'> {
    const holder = await this.unclaimedHolder(held.planned);
    if (holder === undefined) return { held };
    const data: ClaimData = { ...this.claimData(held.planned), grantName: holder, state: 'bound' };
    try {
      await this.store.replaceClaim(held.planned.name, data, held.resourceVersion);
    } catch (error) {
      if (!isPreconditionConflict(error) && !isNotFound(error)) throw error;
      return 'changed';
    }
    this.log.info({ claim: held.planned.name, grant: holder }, 'gave an unclaimed grant its claim');
    return { blocked: held.planned, why: 'active' };
  }

  /** The name of an effective grant of this API, other than the request's own, on the claim's triple. */
  private async unclaimedHolder(planned: PlannedClaim): Promise<string | undefined> {
    const candidates = this.cache
      .grantsWithClaimKey(planned.key)
      .filter(
        (grant) =>
          madeByAclApi(grant, this.cache.aclNamespace) &&
          grant.metadata.name !== planned.grantName &&
          this.isEffective(grant),
      );
    for (const candidate of candidates) {
      const current = await this.store.getGrant(candidate.metadata.name ?? '');
      if (current && this.isEffective(current)) return current.metadata.name;
    }
    return undefined;
  }

  /** The grant verdict now (a new evaluator each time: one remembers its verdicts by grant). */
  private isEffective(grant: PolicyGrant, now = this.settings.now()): boolean {
    return new GrantEvaluator(this.cache, now).evaluate(grant).enforce;
  }

  /** Replaces a vacant claim, conditioned on its resourceVersion: of two takers exactly one wins. */
  private async takeOver(planned: PlannedClaim, existing: StoredClaim): Promise<ClaimOutcome | 'changed'> {
    try {
      const { resourceVersion } = existing.metadata;
      const taken = await this.store.replaceClaim(planned.name, this.claimData(planned), resourceVersion);
      this.log.info({ claim: planned.name, from: existing.spec.grantName }, 'took over a vacant claim');
      return { held: { planned, resourceVersion: taken.metadata.resourceVersion, mine: true } };
    } catch (error) {
      if (!isPreconditionConflict(error) && !isNotFound(error)) throw error;
      return 'changed';
    }
  }

  private async createGrant(
    grant: PlannedGrant,
    metadata: {
      labels: Record<string, string>;
      annotations: Record<string, string>;
      idempotencyKey?: string;
    },
  ): Promise<PolicyGrant> {
    try {
      const created = await this.store.createGrant({ name: grant.name, spec: grant.spec, ...metadata });
      this.createdGrants.push(created);
      return created;
    } catch (error) {
      if (!isAlreadyExists(error) || metadata.idempotencyKey === undefined) throw error;
    }
    // Only deterministic (Idempotency-Key) names can already exist: a twin request made it, or another body.
    const existing = await this.store.getGrant(grant.name);
    const hash = metadata.annotations[REQUEST_HASH_ANNOTATION];
    if (!existing || existing.metadata.annotations?.[REQUEST_HASH_ANNOTATION] !== hash) {
      throw idempotencyKeyReused(metadata.idempotencyKey);
    }
    return existing;
  }

  /** pending → bound, conditioned on the claim being as this request left it (or as its twin left it). */
  private async bind(held: HeldClaim): Promise<void> {
    let resourceVersion = held.resourceVersion;
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      try {
        const data: ClaimData = { ...this.claimData(held.planned), state: 'bound' };
        const bound = await this.store.replaceClaim(held.planned.name, data, resourceVersion);
        held.resourceVersion = bound.metadata.resourceVersion;
        return;
      } catch (error) {
        if (!isPreconditionConflict(error) && !isNotFound(error)) throw error;
      }
      const current = await this.store.getClaim(held.planned.name);
      const claim = current?.spec;
      if (!current || claim?.grantName !== held.planned.grantName) {
        throw new HttpError(
          'Conflict',
          `the claim on ${describeClaim(held.planned.key)} was taken by a concurrent request; retry`,
        );
      }
      if (claim.state === 'bound') return;
      resourceVersion = current.metadata.resourceVersion;
    }
  }
}

/** A budget of waiting shared by all claims of one request, spent in growing, jittered pauses. */
class WaitBudget {
  private readonly deadline: number;
  // Each pause lies between half and one and a half times a nominal pause that doubles from FIRST_PAUSE_MS to
  // LONGEST_PAUSE_MS: half the nominal, plus up to twice that at random.
  private readonly backoff = new Backoff({
    initialMs: FIRST_PAUSE_MS / 2,
    maxMs: LONGEST_PAUSE_MS / 2,
    jitter: 2,
  });

  constructor(budgetMs: number) {
    this.deadline = performance.now() + budgetMs;
  }

  /** Pauses before the next read; false (at once) when the budget is spent. */
  async pause(): Promise<boolean> {
    const left = this.deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(left, this.backoff.next()));
    return true;
  }
}

function describeClaim(key: ClaimKey): string {
  return `${describeSubject(key.subject)}, item ${key.itemId}, access type ${key.accessType}`;
}

/** One 409 naming, per subject and item, the access types already granted or being granted. */
function conflict(blocked: readonly Blocked[]): HttpError {
  const groups = new Map<string, { key: ClaimKey; why: string; accessTypes: string[] }>();
  for (const { blocked: claim, why } of blocked) {
    const id = `${why}\n${claim.key.subject}\n${claim.key.itemId}`;
    const group = groups.get(id) ?? { key: claim.key, why, accessTypes: [] };
    group.accessTypes.push(claim.key.accessType);
    groups.set(id, group);
  }
  const parts = [...groups.values()].map(({ key, why, accessTypes }) => {
    const access = `access type${accessTypes.length > 1 ? 's' : ''} ${accessTypes.join(', ')}`;
    return why === 'active'
      ? `an active policy already gives ${describeSubject(key.subject)} ${access} on item ${key.itemId}`
      : `a policy giving ${describeSubject(key.subject)} ${access} on item ${key.itemId} is being created by a concurrent request`;
  });
  return new HttpError('Conflict', parts.join('; '));
}

/** One answer, whatever the catalog holds, so that it tells a caller without authority nothing. */
function mayNotGrant(item: CreateItem, index: number): HttpError {
  return new HttpError(
    'Forbidden',
    `request[${index}]: only the owner of item ${item.itemId} or an org_admin of its organisation ` +
      `may grant access to it`,
  );
}

function idempotencyKeyReused(key: string): HttpError {
  return new HttpError(
    'Conflict',
    `Idempotency-Key ${JSON.stringify(key)} was already used with a different request body`,
  );
}
