import { describe, expect, it } from 'vitest';
import { authzenSearches } from '../../../../src/decision/authzen/authzen-search.js';
import type { SearchBackend } from '../../../../src/decision/authzen/authzen-search.js';
import type { LookupResourcesInput } from '../../../../src/spicedb/client.js';
import { SpiceDBError } from '../../../../src/spicedb/errors.js';
import { loadRegistry } from '../../../../src/spicedb/registry.js';
import type { CanonicalCheck } from '../../../../src/decision/canonical-check.js';
import type { Searcher } from '../../../../src/decision/authzen/authzen-search.js';
import { PageTokens } from '../../../../src/decision/authzen/page-token.js';

const PLATFORM: Searcher = { scope: 'every', principal: undefined };

interface BackendOptions {
  /** Each item's organisation: what the owner checks of a scoped searcher find. */
  organisations?: Record<string, string>;
  /** Whether the barrier says nothing changed since a page's snapshot; default true. */
  unchanged?: () => boolean;
  /** What a check of a search's pair allows (a confirmation on a later page); default everything. */
  allows?: (check: CanonicalCheck) => boolean;
}

// The searches over a SpiceDB stand-in that answers from a list and counts its calls: what they ask SpiceDB,
// not SpiceDB's answers (the integration tests have those).
function backend(ids: string[], { organisations = {}, unchanged = () => true, allows }: BackendOptions = {}) {
  const calls = {
    lookupResources: [] as LookupResourcesInput[],
    lookupSubjects: 0,
    checks: [] as CanonicalCheck[],
  };
  const spicedb: SearchBackend = {
    lookupResources: (input) => {
      calls.lookupResources.push(input);
      const start = input.cursor === undefined ? 0 : Number(input.cursor);
      const resourceIds = ids.slice(start, start + input.limit);
      const end = start + resourceIds.length;
      return Promise.resolve({
        resourceIds,
        resultCount: resourceIds.length,
        cursor: resourceIds.length > 0 ? String(end) : undefined,
        lookedUpAt: 'revision-1',
      });
    },
    lookupSubjects: () => {
      calls.lookupSubjects += 1;
      return Promise.resolve({ subjectIds: [...ids].reverse(), lookedUpAt: 'revision-1' });
    },
  };
  const searches = authzenSearches({
    registry: loadRegistry(),
    spicedb,
    barrier: {
      searchConsistency: () =>
        Promise.resolve({ consistency: { minimizeLatency: true }, source: 'minimize_latency' }),
      unchangedFor: unchanged,
    },
    evaluate: (check) => {
      calls.checks.push(check);
      const allowed =
        check.relation === 'owner'
          ? organisations[check.object.id] === check.subject.id
          : (allows?.(check) ?? true);
      return Promise.resolve({ ...check, allowed });
    },
    metrics: { backendError: () => undefined },
    pageTokens: new PageTokens(),
  });
  return { searches, calls, spicedb };
}

const ids = ['item-a', 'item-b', 'item-c', 'item-d'];

describe('search/resource', () => {
  it('reads the page after a full one, serves it to the next request, and ends without an empty page', async () => {
    const { searches, calls } = backend(ids);
    const search = { subject: { type: 'user', id: 'consumer' }, resource: { type: 'resource' } };
    const first = await searches.resources(
      { ...search, action: { name: 'api' }, page: { limit: 2 } },
      PLATFORM,
    );
    expect(first.results.map((result) => result.id)).toEqual(['item-a', 'item-b']);
    expect(first.page.next_token).not.toBe('');
    expect(calls.lookupResources.map((call) => call.cursor)).toEqual([undefined, '2']);

    const second = await searches.resources(
      { ...search, action: { name: 'api' }, page: { limit: 2, token: first.page.next_token } },
      PLATFORM,
    );
    expect(second.results.map((result) => result.id)).toEqual(['item-c', 'item-d']);
    // The last page says so: no third request, to an empty page.
    expect(second.page.next_token).toBe('');
    // Its own page came from memory; SpiceDB was asked only for the page after it, with the first call's limit.
    expect(calls.lookupResources.map((call) => [call.cursor, call.limit])).toEqual([
      [undefined, 2],
      ['2', 2],
      ['4', 2],
    ]);
  });

  it('answers 503 when the page ahead cannot be read, with no rejection left unhandled', async () => {
    const { searches, spicedb } = backend(ids);
    const lookUp = spicedb.lookupResources;
    spicedb.lookupResources = (input) =>
      input.cursor === undefined
        ? lookUp(input)
        : Promise.reject(new SpiceDBError('LookupResources', 14, 'connection refused'));
    const unhandled: unknown[] = [];
    const remember = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', remember);
    try {
      const search = searches.resources(
        {
          subject: { type: 'user', id: 'consumer' },
          resource: { type: 'resource' },
          action: { name: 'api' },
          page: { limit: 2 },
        },
        PLATFORM,
      );
      await expect(search).rejects.toMatchObject({ kind: 'DependencyUnavailable' });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', remember);
    }
    expect(unhandled).toEqual([]);
  });

  it('asks no page ahead of a page that is not full', async () => {
    const { searches, calls } = backend(ids);
    const page = await searches.resources(
      {
        subject: { type: 'user', id: 'consumer' },
        resource: { type: 'resource' },
        action: { name: 'api' },
        page: { limit: 10 },
      },
      PLATFORM,
    );
    expect(page.page).toEqual({ next_token: '', count: 4 });
    expect(calls.lookupResources).toHaveLength(1);
  });
});

describe('search/subject', () => {
  it('reads SpiceDB once for every page of a search, in id order, each id once', async () => {
    const { searches, calls } = backend(ids);
    const search = {
      subject: { type: 'user' },
      resource: { type: 'resource', id: 'urn:dx:item:1' },
      action: { name: 'api' },
    };
    const found: string[] = [];
    let token = '';
    do {
      const page = await searches.subjects(
        { ...search, page: { limit: 3, ...(token ? { token } : {}) } },
        PLATFORM,
      );
      found.push(...page.results.map((result) => result.id));
      token = page.page.next_token;
    } while (token);
    expect(found).toEqual(ids);
    expect(calls.lookupSubjects).toBe(1);
  });
});

describe('search pages after a change', () => {
  const search = {
    subject: { type: 'user', id: 'consumer' },
    resource: { type: 'resource' },
    action: { name: 'api' },
  };
  const pages = async (searches: ReturnType<typeof backend>['searches']) => {
    const first = await searches.resources({ ...search, page: { limit: 2 } }, PLATFORM);
    const second = await searches.resources(
      { ...search, page: { limit: 2, token: first.page.next_token } },
      PLATFORM,
    );
    return [first, second].map((page) => page.results.map((result) => result.id));
  };

  it('confirm their results with checks when the Watch may have delivered a change since the first page', async () => {
    const { searches, calls } = backend(ids, {
      unchanged: () => false,
      allows: (check) => check.object.id !== 'item-c',
    });
    // item-c was revoked after the first page: the second page, read at the first page's snapshot, drops it.
    expect(await pages(searches)).toEqual([['item-a', 'item-b'], ['item-d']]);
    expect(calls.checks.map((check) => check.object.id)).toEqual(['item-c', 'item-d']);
  });

  it('ask no check while nothing changed since the first page', async () => {
    const { searches, calls } = backend(ids, { allows: () => false });
    expect(await pages(searches)).toEqual([
      ['item-a', 'item-b'],
      ['item-c', 'item-d'],
    ]);
    expect(calls.checks).toEqual([]);
  });
});

describe('a searcher bound to organisations', () => {
  const organisations = { 'item-a': 'org-1', 'item-b': 'org-2', 'item-c': 'org-1' };
  const scoped: Searcher = { scope: new Set(['org-1']), principal: undefined };

  it('finds only the items of its organisations', async () => {
    const { searches } = backend(ids, { organisations });
    const page = await searches.resources(
      { subject: { type: 'user', id: 'consumer' }, resource: { type: 'resource' }, action: { name: 'api' } },
      scoped,
    );
    expect(page.results.map((result) => result.id)).toEqual(['item-a', 'item-c']);
    expect(page.page.count).toBe(2);
  });

  it("lists no subject of another organisation's item, and does not ask SpiceDB for them", async () => {
    const { searches, calls } = backend(['user-1', 'user-2'], { organisations });
    const search = { subject: { type: 'user' }, action: { name: 'api' } };
    const foreign = await searches.subjects(
      { ...search, resource: { type: 'resource', id: 'item-b' } },
      scoped,
    );
    expect(foreign).toEqual({ results: [], page: { next_token: '', count: 0 } });
    expect(calls.lookupSubjects).toBe(0);
    const own = await searches.subjects({ ...search, resource: { type: 'resource', id: 'item-a' } }, scoped);
    expect(own.results.map((result) => result.id)).toEqual(['user-1', 'user-2']);
  });

  it("finds no action on another organisation's item", async () => {
    const { searches } = backend([], { organisations });
    const actions = (id: string) =>
      searches.actions(
        { subject: { type: 'user', id: 'consumer' }, resource: { type: 'resource', id } },
        scoped,
      );
    expect((await actions('item-b')).results).toEqual([]);
    expect((await actions('item-a')).results.length).toBeGreaterThan(0);
  });
});

describe('search/subject over a large answer', () => {
  it('reads SpiceDB once for every page of 100,000 subjects', async () => {
    const many = Array.from({ length: 100_000 }, (_, index) => `user-${String(index).padStart(6, '0')}`);
    const { searches, calls } = backend(many);
    const search = {
      subject: { type: 'user' },
      resource: { type: 'resource', id: 'item-a' },
      action: { name: 'api' },
    };
    let count = 0;
    let token = '';
    do {
      const page = await searches.subjects(
        { ...search, page: { limit: 1_000, ...(token ? { token } : {}) } },
        PLATFORM,
      );
      count += page.page.count;
      token = page.page.next_token;
    } while (token);
    expect(count).toBe(100_000);
    expect(calls.lookupSubjects).toBe(1);
  });
});
