import { HttpError } from '../../http/errors.js';
import type { Consistency, LookupResourcesPage, SpiceDBClient } from '../../spicedb/client.js';
import { SpiceDBError } from '../../spicedb/errors.js';
import { decodeObjectId } from '../../spicedb/object-id.js';
import type { CanonicalCheck, Registry } from '../../spicedb/registry.js';
import type { CanonicalCheckEvaluator } from '../check-evaluator.js';
import type { DecisionMetrics } from '../decision-metrics.js';
import { grpcStatusName } from '../grpc-status.js';
import type { RevisionBarrier } from '../revision-barrier.js';
import { DEFAULT_PAGE_LIMIT, pageLimit } from './authzen-request.js';
import type {
  ActionSearchRequest,
  PageRequest,
  ResourceSearchRequest,
  SubjectSearchRequest,
} from './authzen-request.js';
import { canonicalEvaluation, withinVocabulary } from './authzen-vocabulary.js';
import { decodePageToken, encodePageToken, searchFingerprint } from './page-token.js';
import { SearchMemory } from './search-memory.js';
import type { PageState } from './page-token.js';

/** What the searches need of SpiceDB; SpiceDBClient is one. */
export type SearchBackend = Pick<SpiceDBClient, 'lookupResources' | 'lookupSubjects'>;

export interface SearchPage<T> {
  page: { next_token: string; count: number };
  results: T[];
}

export interface AuthzenSearchOptions {
  registry: Registry;
  spicedb: SearchBackend;
  barrier: Pick<RevisionBarrier, 'searchConsistency'>;
  /** The check's own evaluator: search/action asks each action as a check (cache, barrier, batcher). */
  evaluate: CanonicalCheckEvaluator;
  metrics: Pick<DecisionMetrics, 'backendError'>;
}

export interface AuthzenSearches {
  resources(request: ResourceSearchRequest): Promise<SearchPage<{ type: string; id: string }>>;
  subjects(request: SubjectSearchRequest): Promise<SearchPage<{ type: string; id: string }>>;
  actions(request: ActionSearchRequest): Promise<SearchPage<{ name: string }>>;
}

/**
 * The searched side of a search has no id: the registry checks the request with this one in its place, and
 * only the types and relation of the canonical check are used.
 */
const SEARCHED = 'searched';

/**
 * The three searches. Each first page is read at the consistency the revision barrier picks for a search (so a
 * change acknowledged before it is seen), each later page at exactly the first page's snapshot (the token
 * carries it). Pages are complete: a page that may not be the last carries a `next_token`.
 */
export function authzenSearches(options: AuthzenSearchOptions): AuthzenSearches {
  const { registry } = options;
  const consistencyOf = pageConsistency(options);
  // search/resource's pages read ahead, by search, limit and the cursor they start at (taken once).
  const pagesAhead = new SearchMemory<LookupResourcesPage>((page) => page.resourceIds.length);
  // search/subject's sorted answers, by search and snapshot (every later page of the search reads one).
  const sortedSubjects = new SearchMemory<string[]>((ids) => ids.length);
  return {
    async resources(request) {
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
      const state = pageState(request.page, search);
      const limit = state?.limit ?? pageLimit(request.page);
      const { results, next } = await fromSpiceDB(options, state, async () => {
        const consistency = await firstPageConsistency(options, state);
        // SpiceDB accepts a cursor only with the arguments of the call that gave it (the limit too), and reads
        // at the revision the cursor pins.
        const lookUp = (cursor: string | undefined) =>
          options.spicedb.lookupResources({
            resourceType: spicedb.resourceType,
            permission: spicedb.permission,
            subject: subjectRef(check),
            consistency,
            limit,
            ...(cursor === undefined ? {} : { cursor }),
          });
        const aheadKey = (cursor: string) => `${search} ${limit} ${cursor}`;
        const page =
          (state?.cursor === undefined ? undefined : pagesAhead.take(aheadKey(state.cursor))) ??
          (await lookUp(state?.cursor));
        // A full page reads the next one (SpiceDB takes no limit above 1,000, so not limit + 1 in one call):
        // the last page says it is the last, and the next request finds its page read. This page's ids are
        // decoded while SpiceDB reads it.
        const full = page.resultCount === limit && page.cursor !== undefined;
        const ahead = full ? lookUp(page.cursor) : undefined;
        const results = await whileInFlight(ahead, () =>
          page.resourceIds.map((id) => ({ type: request.resource.type, id: decodeObjectId(id) })),
        );
        const following = await ahead;
        if (following === undefined || following.resultCount === 0 || page.cursor === undefined) {
          return { results, next: undefined };
        }
        pagesAhead.keep(aheadKey(page.cursor), following);
        const next: PageState = {
          search,
          limit,
          cursor: page.cursor,
          ...('atLeastAsFresh' in consistency ? { atLeastAsFresh: consistency.atLeastAsFresh } : {}),
        };
        return { results, next };
      });
      return answer(results, next);
    },

    async subjects(request) {
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
      const { spicedb } = check;
      const search = searchFingerprint(
        'subject',
        spicedb.resourceType,
        spicedb.resourceId,
        spicedb.permission,
        spicedb.subjectType,
      );
      const state = pageState(request.page, search);
      const heldKey = (snapshot: string) => `${search} ${snapshot}`;
      const lookUpSorted = () =>
        fromSpiceDB(options, state, async () => {
          const found = await options.spicedb.lookupSubjects({
            resource: { type: spicedb.resourceType, id: spicedb.resourceId },
            permission: spicedb.permission,
            subjectType: spicedb.subjectType,
            consistency: await consistencyOf(state),
          });
          return { sorted: inCodeUnitOrder(found.subjectIds), snapshot: state?.snapshot ?? found.lookedUpAt };
        });
      const held = state?.snapshot === undefined ? undefined : sortedSubjects.get(heldKey(state.snapshot));
      const { sorted, snapshot } = held ? { sorted: held, snapshot: state?.snapshot } : await lookUpSorted();
      const { items, last, more } = pageAfter(sorted, state?.after, pageLimit(request.page));
      if (more && snapshot !== undefined && held === undefined)
        sortedSubjects.keep(heldKey(snapshot), sorted);
      const results = items.map((id) => ({ type: request.subject.type, id: decodeObjectId(id) }));
      return answer(
        results,
        more && snapshot !== undefined ? { search, snapshot, ...after(last) } : undefined,
      );
    },

    async actions(request) {
      const names = withinVocabulary('', () => registry.relationNames(request.resource.type));
      const checks = names.map((name) => canonicalEvaluation(registry, { ...request, action: { name } }));
      const search = searchFingerprint(
        'action',
        ...subjectOf(checks[0]),
        checks[0]?.spicedb.resourceId ?? '',
      );
      const state = pageState(request.page, search);
      // Asked together, the checks reach SpiceDB as one CheckBulkPermissions (the check batcher).
      const decided = await Promise.all(checks.map((check) => options.evaluate(check, undefined)));
      const permitted = decided.filter((result) => result.allowed).map((result) => result.relation);
      const { items, last, more } = pageAfter(
        inCodeUnitOrder(permitted),
        state?.after,
        pageLimit(request.page),
      );
      return answer(
        items.map((name) => ({ name })),
        more ? { search, ...after(last) } : undefined,
      );
    },
  };
}

/**
 * `work()`, done while `call` is in flight: after a turn of the event loop, by which grpc-js has written the call
 * (it starts a call through promises, and node's HTTP/2 writes on its own immediate), so that the work overlaps
 * SpiceDB's time instead of adding to it. The caller awaits `call` itself; its rejection is not unhandled if
 * `work()` throws first.
 */
async function whileInFlight<T>(call: Promise<unknown> | undefined, work: () => T): Promise<T> {
  if (call === undefined) return work();
  call.catch(() => undefined);
  await new Promise((resolve) => setImmediate(resolve));
  return work();
}

function after(last: string | undefined): Pick<PageState, 'after'> {
  return last === undefined ? {} : { after: last };
}

function subjectOf(check: CanonicalCheck | undefined): string[] {
  const spicedb = check?.spicedb;
  return [spicedb?.subjectType ?? '', spicedb?.subjectId ?? '', spicedb?.subjectRelation ?? ''];
}

function subjectRef({ spicedb }: CanonicalCheck) {
  return {
    type: spicedb.subjectType,
    id: spicedb.subjectId,
    ...(spicedb.subjectRelation === undefined ? {} : { relation: spicedb.subjectRelation }),
  };
}

function pageState(page: PageRequest | undefined, search: string): PageState | undefined {
  return page?.token ? decodePageToken(page.token, search) : undefined;
}

/** `page` first, as AuthZEN recommends: a client reading as it arrives learns the count before the results. */
function answer<T>(results: T[], next: PageState | undefined): SearchPage<T> {
  return { page: { next_token: next ? encodePageToken(next) : '', count: results.length }, results };
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

/** The ids in code-unit order: a deterministic order in which a page continues after its last id. */
export function inCodeUnitOrder(ids: readonly string[]): string[] {
  // Without a compare function, sort orders strings by code units, and runs no JavaScript per comparison.
  return [...ids].sort();
}

/** The ids of `sorted` (inCodeUnitOrder) after `after`, at most `limit` of them; `more` when some remain. */
export function pageAfter(
  sorted: readonly string[],
  after: string | undefined,
  limit = DEFAULT_PAGE_LIMIT,
): { items: string[]; last: string | undefined; more: boolean } {
  const following = after === undefined ? 0 : sorted.findIndex((id) => id > after);
  const start = following < 0 ? sorted.length : following;
  const items = sorted.slice(start, start + limit);
  return { items, last: items.at(-1), more: start + limit < sorted.length };
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
    metrics.backendError(status);
    throw new HttpError('DependencyUnavailable', 'spicedb could not answer the search; denied', {
      cause: error,
    });
  }
}
