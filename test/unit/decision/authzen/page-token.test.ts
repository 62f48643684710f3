import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../../src/auth/principal.js';
import {
  callerDigest,
  continuedLimit,
  PAGE_TOKEN_TTL_MS,
  PageTokens,
  requestDigest,
} from '../../../../src/decision/authzen/page-token.js';

const gateway: Principal = { kind: 'application', id: 'gateway', clientId: 'gateway', roles: new Set() };
const other: Principal = { kind: 'application', id: 'other', clientId: 'other', roles: new Set() };
const request = {
  subject: { type: 'user', id: 'u' },
  resource: { type: 'resource' },
  action: { name: 'api' },
  context: { time: 't' },
  page: { limit: 5 },
};
const binding = { request: requestDigest('resource', request), caller: callerDigest(gateway) };
const state = { cursor: 'c', atLeastAsFresh: 'z', limit: 5 };

/** A PageTokens whose clock the test sets. */
function tokens(keys: Uint8Array[] = [randomBytes(32)]) {
  const clock = { now: 1_000_000 };
  return { pageTokens: new PageTokens(keys, () => clock.now), clock };
}

const refused = (read: () => unknown, why: RegExp) => {
  expect(read).toThrow(/^page\.token: /);
  expect(read).toThrow(why);
};

describe('page tokens', () => {
  it('give back the state of a search and when its first page chose its snapshot', () => {
    const { pageTokens } = tokens();
    expect(pageTokens.read(pageTokens.issue(state, binding, 999_000), binding)).toEqual({
      ...state,
      readAt: 999_000,
    });
  });

  it('are bound to the whole request: any member or page.limit changed is a 400 naming page.token, an omitted limit continues', () => {
    const { pageTokens } = tokens();
    const token = pageTokens.issue(state, binding, 1_000_000);
    // The token itself is not part of what it binds.
    const same = requestDigest('resource', { ...request, page: { limit: 5, token } });
    expect(pageTokens.read(token, { ...binding, request: same })).toMatchObject(state);
    // Members in another order are the same request.
    const reordered = {
      page: { limit: 5 },
      context: { time: 't' },
      action: { name: 'api' },
      resource: { type: 'resource' },
      subject: { id: 'u', type: 'user' },
    };
    expect(requestDigest('resource', reordered)).toBe(binding.request);
    // The token carries page.limit: a later request repeats it or leaves it out (as AuthZEN's own example does).
    expect(requestDigest('resource', { ...request, page: { token } })).toBe(binding.request);
    expect(continuedLimit(state, undefined)).toBe(5);
    expect(continuedLimit(state, 5)).toBe(5);
    refused(() => continuedLimit(state, 6), /another request/);
    for (const changed of [
      { ...request, context: { time: 'u' } },
      { ...request, subject: { type: 'user', id: 'v' } },
      { ...request, action: { name: 'file' } },
      { ...request, resource: { type: 'DATABANK' } },
    ]) {
      refused(
        () => pageTokens.read(token, { ...binding, request: requestDigest('resource', changed) }),
        /another request/,
      );
    }
    refused(
      () => pageTokens.read(token, { ...binding, request: requestDigest('subject', request) }),
      /another request/,
    );
  });

  it("refuse another caller's token", () => {
    const { pageTokens } = tokens();
    const token = pageTokens.issue(state, binding, 1_000_000);
    refused(() => pageTokens.read(token, { ...binding, caller: callerDigest(other) }), /another caller/);
  });

  it('refuse a token older than their lifetime, counted from the first page', () => {
    const { pageTokens, clock } = tokens();
    const token = pageTokens.issue(state, binding, clock.now);
    clock.now += PAGE_TOKEN_TTL_MS;
    expect(pageTokens.read(token, binding)).toMatchObject(state);
    clock.now += 1;
    refused(() => pageTokens.read(token, binding), /expired/);
  });

  it('refuse an edited, a forged or a malformed token', () => {
    const { pageTokens } = tokens();
    const token = pageTokens.issue({ snapshot: 'new' }, binding, 1_000_000);
    const [body = '', signature = ''] = token.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const edited = Buffer.from(JSON.stringify({ ...payload, s: 'old' })).toString('base64url');
    const forged = tokens().pageTokens.issue({ snapshot: 'old' }, binding, 1_000_000);
    for (const candidate of [
      `${edited}.${signature}`,
      forged,
      body,
      `${body}.${signature}.x`,
      'not-a-token',
      Buffer.from('{"v":1,"q":"x","s":"old"}').toString('base64url'),
    ]) {
      refused(() => pageTokens.read(candidate, binding), /not a next_token of this decision point/);
    }
  });

  it('rotate: the first key signs, every key verifies', () => {
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const before = tokens([oldKey]).pageTokens.issue(state, binding, 1_000_000);
    const rotated = tokens([newKey, oldKey]).pageTokens;
    expect(rotated.read(before, binding)).toMatchObject(state);
    const after = rotated.issue(state, binding, 1_000_000);
    refused(() => tokens([oldKey]).pageTokens.read(after, binding), /not a next_token/);
    refused(() => tokens([newKey]).pageTokens.read(before, binding), /not a next_token/);
  });

  it('refuse a key shorter than 32 bytes', () => {
    expect(() => new PageTokens([randomBytes(16)])).toThrow(/at least 32 bytes/);
  });
});
