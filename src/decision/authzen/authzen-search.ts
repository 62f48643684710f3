import { HttpError } from '../../http/errors.js';
import type { Consistency, LookupResourcesPage, SpiceDBClient } from '../../spicedb/client.js';
import { SpiceDBError } from '../../spicedb/errors.js';
import { decodeObjectId } from '../../spicedb/object-id.js';
import type { Registry } from '../../spicedb/registry.js';
import { relationNames, spicedbSubject, withinVocabulary } from '../canonical-check.js';
import type { CanonicalCheck } from '../canonical-check.js';
import type { CanonicalCheckEvaluator } from '../canonical-check.js';
import type { DecisionMetrics } from '../decision-metrics.js';
import { grpcStatusName } from '../grpc-status.js';
import { spicedbUnavailable } from '../spicedb-failure.js';
import type { RevisionBarrier } from '../revision-barrier.js';
import type { Principal } from '../../auth/principal.js';
import { withinScope } from '../organisation-scope.js';
import type { OrganisationScope } from '../organisation-scope.js';
import { pageLimit } from './authzen-request.js';
import type { ActionSearchRequest, ResourceSearchRequest, SubjectSearchRequest } from './authzen-request.js';
import { AUTHZEN_FIELDS, canonicalEvaluation } from './authzen-vocabulary.js';
import { callerDigest, continuedLimit, requestDigest, searchFingerprint } from './page-token.js';
import type { ContinuedPage, PageState, PageTokens } from './page-token.js';
import { SearchAnswerCache } from './search-answer-cache.js';
import { SortedIds } from './sorted-ids.js';

/** What the searches need of SpiceDB; SpiceDBClient is one. */
export type SearchBackend = Pick<SpiceDBClient, 'lookupResources' | 'lookupSubjects'>;

export interface SearchPage<T> {
  page: { next_token: string; count: number };
  results: T[];
}

export interface AuthzenSearchOptions {
  registry: Registry;
  spicedb: SearchBackend;
  barrier: Pick<RevisionBarrier, 'searchConsistency' | 'unchangedFor'>;
  /** The check's own evaluator: search/action asks each action as a check (cache, barrier, batcher). */
  evaluate: CanonicalCheckEvaluator;
  metrics: Pick<DecisionMetrics, 'backendError'>;
  /** Signs and reads the page tokens. */
  pageTokens: PageTokens;
}

/** Who searches: what its searches may list (check-callers.ts, searchScope) and its digest for page tokens. */
export interface Searcher {
  scope: OrganisationScope;
  principal: Principal | undefined;
}

export interface AuthzenSearches {
  resources(
    request: ResourceSearchRequest,
    searcher: Searcher,
  ): Promise<SearchPage<{ type: string; id: string }>>;
  subjects(
    request: SubjectSearchRequest,
    searcher: Searcher,
  ): Promise<SearchPage<{ type: string; id: string }>>;
  actions(request: ActionSearchRequest, searcher: Searcher): Promise<SearchPage<{ name: string }>>;
}

/**
 * The searched side of a search has no id: the registry checks the request with this one in its place, and
 * only the types and relation of the canonical check are used.
 */
const SEARCHED = 'searched';

/**
 * The three searches. Each first page is read at the consistency the revision barrier picks for a search (so a
 * change acknowledged before it is seen), each later page at exactly the first page's snapshot (the token
 * carries it); a later page whose snapshot the Watch may have overtaken confirms its results with checks, so no
 * page lists a pair whose revocation was acknowledged. A searcher bound to organisations sees only their items
 * and the subjects of their items. Pages are complete: a page that may not be the last carries a `next_token`.
 */
export function authzenSearches(options: AuthzenSearchOptions): AuthzenSearches {
  const { registry, pageTokens } = options;
  const consistencyOf = pageConsistency(options);
  const keepVisible = visibleResults(options);
  // search/resource's pages read ahead, by search, limit and the cursor they start at (taken once).
  const pagesAhead = new SearchAnswerCache<LookupResourcesPage>((page) => idBytes(page.resourceIds));
  // search/subject's sorted answers, by search and snapshot (every later page of the search reads one).
  const sortedSubjects = new SearchAnswerCache<SortedIds>((ids) => ids.bytes);
  const paging = (route: string, request: SearchRequest, searcher: Searcher) => {
    const binding = { request: requestDigest(route, request), caller: callerDigest(searcher.principal) };
    const state = request.page?.token ? pageTokens.read(request.page.token, binding) : undefined;
    const requested = request.page?.limit === undefined ? undefined : pageLimit(request.page);
    const limit = (state && continuedLimit(state, requested)) ?? pageLimit(request.page);
    const readAt = state?.readAt ?? pageTokens.now();
    // `page` first, as AuthZEN recommends: a client reading as it arrives learns the count before the results.
    const answer = <T>(results: T[], next: PageState | undefined): SearchPage<T> => ({
      page: {
        next_token: next ? pageTokens.issue({ ...next, limit }, binding, readAt) : '',
        count: results.length,
      },
      results,
    });
    return { state, limit, answer };
  };
  return {
    async resources(request, searcher) {
      const check = canonicalEvaluation(registry, {
        ...request,
        resource: { type: request.resource.type, id: SEARCHED },
      });
      const { spicedb } = check;
      const search = searchFingerprint(
        'resource',
        spicedb.resourceType,
        spicedb.permission,
        ...subjectOf(check),
      );
      const { state, limit, answer } = paging('resource', request, searcher);
      const { ids, next } = await fromSpiceDB(options, state, async () => {
        const consistency = await firstPageConsistency(options, state);
        // SpiceDB accepts a cursor only with the arguments of the call that gave it (the limit too), and reads
        // at the revision the cursor pins.
        const lookUp = (cursor: string | undefined) =>
          options.spicedb.lookupResources({
            resourceType: spicedb.resourceType,
            permission: spicedb.permission,
            subject: spicedbSubject(check),
            consistency,
            limit,
            ...(cursor === undefined ? {} : { cursor }),
          });
        const aheadKey = (cursor: string) => `${search} ${limit} ${cursor}`;
        const page =
          (state?.cursor === undefined ? undefined : pagesAhead.take(aheadKey(state.cursor))) ??
          (await lookUp(state?.cursor));
        // A full page reads the next one (SpiceDB takes no limit above 1,000, so not limit + 1 in one call):
        // the last page says it is the last, and the next request finds its page read.
        const ids = page.resourceIds.map((id) => ({ encoded: id, id: decodeObjectId(id) }));
        const cursor = page.resultCount === limit ? page.cursor : undefined;
        if (cursor === undefined) return { ids, next: undefined };
        const following = await lookUp(cursor);
        if (following.resultCount === 0) return { ids, next: undefined };
        pagesAhead.keep(aheadKey(cursor), following);
        const next: PageState = {
          limit,
          cursor,
          ...('atLeastAsFresh' in consistency ? { atLeastAsFresh: consistency.atLeastAsFresh } : {}),
        };
        return { ids, next };
      });
      const visible = await keepVisible(ids, (id) => withObject(check, id), state, searcher.scope);
      return answer(
        visible.map(({ id }) => ({ type: request.resource.type, id })),
        next,
      );
    },

    async subjects(request, searcher) {
      const check = canonicalEvaluation(registry, {
        ...request,
        subject: { type: request.subject.type, id: SEARCHED },
      });
      if (check.spicedb.subjectRelation !== undefined) {
        throw new HttpError(
          'BadRequest',
          `subject.type: search/subject answers "user" or "agent", not "${check.subject.type}"`,
        );
      }
      const { state, limit, answer } = paging('subject', request, searcher);
      // Outside the searcher's organisations an item has no subjects it may list: the answer of an item nobody uses.
      const [within] = await withinScope(options.evaluate, [check], searcher.scope);
      if (!within) return answer([], undefined);
      const { spicedb } = check;
      const search = searchFingerprint(
        'subject',
        spicedb.resourceType,
        spicedb.resourceId,
        spicedb.permission,
        spicedb.subjectType,
      );
      const heldKey = (snapshot: string) => `${search} ${snapshot}`;
      const lookUpSorted = () =>
        fromSpiceDB(options, state, async () => {
          const found = await options.spicedb.lookupSubjects({
            resource: { type: spicedb.resourceType, id: spicedb.resourceId },
            permission: spicedb.permission,
            subjectType: spicedb.subjectType,
            consistency: await consistencyOf(state),
          });
          return { sorted: new SortedIds(found.subjectIds), snapshot: state?.snapshot ?? found.lookedUpAt };
        });
      const held = state?.snapshot === undefined ? undefined : sortedSubjects.get(heldKey(state.snapshot));
      const { sorted, snapshot } = held ? { sorted: held, snapshot: state?.snapshot } : await lookUpSorted();
      const { items, last, more } = sorted.pageAfter(state?.after, limit);
      if (more && snapshot !== undefined && held === undefined)
        sortedSubjects.keep(heldKey(snapshot), sorted.compact());
      const ids = items.map((id) => ({ encoded: id, id: decodeObjectId(id) }));
      // Every subject of the item is the item's organisation's to know: the scope was settled by the item.
      const visible = await keepVisible(ids, (id) => withSubject(check, id), state, 'every');
      return answer(
        visible.map(({ id }) => ({ type: request.subject.type, id })),
        more && snapshot !== undefined ? { snapshot, ...after(last) } : undefined,
      );
    },

    async actions(request, searcher) {
      const names = withinVocabulary(AUTHZEN_FIELDS, () => relationNames(registry, request.resource.type));
      const checks = names.map((name) => canonicalEvaluation(registry, { ...request, action: { name } }));
      const { state, limit, answer } = paging('action', request, searcher);
      const [first] = checks;
      const [within] =
        first === undefined ? [true] : await withinScope(options.evaluate, [first], searcher.scope);
      // Asked together, the checks reach SpiceDB as one CheckBulkPermissions (the check batcher).
      const decided = within
        ? await Promise.all(checks.map((check) => options.evaluate(check, undefined)))
        : [];
      const permitted = decided.filter((result) => result.allowed).map((result) => result.relation);
      const { items, last, more } = new SortedIds(permitted).pageAfter(state?.after, limit);
      return answer(
        items.map((name) => ({ name })),
        more ? after(last) : undefined,
      );
    },
  };
}

type SearchRequest = ResourceSearchRequest | SubjectSearchRequest | ActionSearchRequest;

/** A result as SpiceDB names it (`encoded`) and as the answer does. */
interface FoundId {
  encoded: string;
  id: string;
}

/**
 * The results a page may list: those within the searcher's scope and, on a later page whose snapshot the Watch
 * may have overtaken (a change delivered since the first page chose it, or a Watch not trusted), those a check
 * at the barrier's freshness still allows: a revocation acknowledged between two pages is not listed on the
 * second. `checkOf` is the check a result stands for. Every check goes through the check's evaluator, so the
 * checks of a page reach SpiceDB together (the batcher), and their answers are remembered (the decision cache).
 */
function visibleResults({ evaluate, barrier, pageTokens }: AuthzenSearchOptions) {
  return async (
    found: FoundId[],
    checkOf: (found: FoundId) => CanonicalCheck,
    state: ContinuedPage | undefined,
    scope: OrganisationScope,
  ): Promise<FoundId[]> => {
    const confirm = state !== undefined && !barrier.unchangedFor(pageTokens.now() - state.readAt);
    if (!confirm && scope === 'every') return found;
    const checks = found.map(checkOf);
    const [within, allowed] = await Promise.all([
      withinScope(evaluate, checks, scope),
      confirm
        ? Promise.all(checks.map(async (check) => (await evaluate(check, undefined)).allowed))
        : checks.map(() => true),
    ]);
    return found.filter((_, index) => within[index] === true && allowed[index] === true);
  };
}

/** The search's check with a found resource in the searched place. */
function withObject(check: CanonicalCheck, { encoded, id }: FoundId): CanonicalCheck {
  return {
    ...check,
    object: { type: check.object.type, id },
    spicedb: { ...check.spicedb, resourceId: encoded },
  };
}

/** The search's check with a found subject in the searched place. */
function withSubject(check: CanonicalCheck, { encoded, id }: FoundId): CanonicalCheck {
  return {
    ...check,
    subject: { type: check.subject.type, id },
    spicedb: { ...check.spicedb, subjectId: encoded },
  };
}

/** What holding ids costs in bytes (UTF-16 at worst, and a string's header). */
function idBytes(ids: readonly string[]): number {
  return ids.reduce((bytes, id) => bytes + id.length * 2 + 16, 0);
}

function after(last: string | undefined): Pick<PageState, 'after'> {
  return last === undefined ? {} : { after: last };
}

function subjectOf(check: CanonicalCheck | undefined): string[] {
  const spicedb = check?.spicedb;
  return [spicedb?.subjectType ?? '', spicedb?.subjectId ?? '', spicedb?.subjectRelation ?? ''];
}

/**
 * The consistency of a LookupResources page: the barrier's for the first page; the first page's again for the
 * later ones (SpiceDB accepts its cursor only with the first call's arguments, and reads at the revision the
 * cursor pins).
 */
async function firstPageConsistency(
  { barrier }: AuthzenSearchOptions,
  state: PageState | undefined,
): Promise<Consistency> {
  if (state === undefined) return (await barrier.searchConsistency()).consistency;
  return state.atLeastAsFresh === undefined
    ? { minimizeLatency: true }
    : { atLeastAsFresh: state.atLeastAsFresh };
}

/** A later page at exactly the first page's snapshot; a first page (or one without a snapshot) at the barrier's. */
function pageConsistency({ barrier }: AuthzenSearchOptions) {
  return async (state: PageState | undefined): Promise<Consistency> =>
    state?.snapshot === undefined
      ? (await barrier.searchConsistency()).consistency
      : { atExactSnapshot: state.snapshot };
}

/**
 * A SpiceDB failure is a 503 naming it (denied); a later page whose snapshot SpiceDB no longer serves (garbage
 * collected, another datastore) is a 400 asking to start over.
 */
async function fromSpiceDB<T>(
  { metrics }: AuthzenSearchOptions,
  state: PageState | undefined,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof SpiceDBError)) throw error;
    const status = grpcStatusName(error.code);
    if (state !== undefined && status === 'INVALID_ARGUMENT') {
      throw new HttpError(
        'BadRequest',
        'page.token: its snapshot is no longer served; repeat the first request',
        {
          cause: error,
        },
      );
    }
    throw spicedbUnavailable(error, metrics, 'answer the search');
  }
}
