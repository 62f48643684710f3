import { describe, expect, it } from 'vitest';
import { authzenSearches } from '../../../../src/decision/authzen/authzen-search.js';
import type { SearchBackend } from '../../../../src/decision/authzen/authzen-search.js';
import type { LookupResourcesInput } from '../../../../src/spicedb/client.js';
import { SpiceDBError } from '../../../../src/spicedb/errors.js';
import { loadRegistry } from '../../../../src/spicedb/registry.js';

// The searches over a SpiceDB stand-in that answers from a list and counts its calls: what they ask SpiceDB,
// not SpiceDB's answers (the integration tests have those).
function backend(ids: string[]) {
  const calls = { lookupResources: [] as LookupResourcesInput[], lookupSubjects: 0 };
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
    },
    evaluate: () => Promise.reject(new Error('search/action is not searched here')),
    metrics: { backendError: () => undefined },
  });
  return { searches, calls, spicedb };
}

const ids = ['item-a', 'item-b', 'item-c', 'item-d'];

describe('search/resource', () => {
  it('reads the page after a full one, serves it to the next request, and ends without an empty page', async () => {
    const { searches, calls } = backend(ids);
    const search = { subject: { type: 'user', id: 'consumer' }, resource: { type: 'resource' } };
    const first = await searches.resources({ ...search, action: { name: 'api' }, page: { limit: 2 } });
    expect(first.results.map((result) => result.id)).toEqual(['item-a', 'item-b']);
    expect(first.page.next_token).not.toBe('');
    expect(calls.lookupResources.map((call) => call.cursor)).toEqual([undefined, '2']);

    const second = await searches.resources({
      ...search,
      action: { name: 'api' },
      page: { token: first.page.next_token },
    });
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
      const search = searches.resources({
        subject: { type: 'user', id: 'consumer' },
        resource: { type: 'resource' },
        action: { name: 'api' },
        page: { limit: 2 },
      });
      await expect(search).rejects.toMatchObject({ kind: 'DependencyUnavailable' });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', remember);
    }
    expect(unhandled).toEqual([]);
  });

  it('asks no page ahead of a page that is not full', async () => {
    const { searches, calls } = backend(ids);
    const page = await searches.resources({
      subject: { type: 'user', id: 'consumer' },
      resource: { type: 'resource' },
      action: { name: 'api' },
      page: { limit: 10 },
    });
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
      const page = await searches.subjects({ ...search, page: { limit: 3, ...(token ? { token } : {}) } });
      found.push(...page.results.map((result) => result.id));
      token = page.page.next_token;
    } while (token);
    expect(found).toEqual(ids);
    expect(calls.lookupSubjects).toBe(1);
  });
});
