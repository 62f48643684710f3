import { describe, expect, it } from 'vitest';
import { assertIfMatch, entityTag, ifMatchVersions } from '../../../src/http/entity-tags.js';
import { errorKindOf as kindOf } from './support/error-kind.js';

describe('entityTag', () => {
  it('quotes the version', () => {
    expect(entityTag('4711')).toBe('"4711"');
  });
});

describe('ifMatchVersions', () => {
  it('reads one strong tag, or several separated by commas', () => {
    expect(ifMatchVersions('"12"')).toEqual(['12']);
    expect(ifMatchVersions(' "12" , "13"')).toEqual(['12', '13']);
  });

  it('ignores weak tags: If-Match compares strongly, so they never match', () => {
    expect(ifMatchVersions('W/"12", "13"')).toEqual(['13']);
    expect(ifMatchVersions('W/"12"')).toEqual([]);
  });

  it('428 when missing or blank, and for *, which would match any version', () => {
    expect(kindOf(() => ifMatchVersions(undefined))).toBe('PreconditionRequired');
    expect(kindOf(() => ifMatchVersions('  '))).toBe('PreconditionRequired');
    expect(kindOf(() => ifMatchVersions('*'))).toBe('PreconditionRequired');
  });

  it('400 naming If-Match for what is not an entity tag', () => {
    for (const header of ['12', '"12', '"1"2"', '"12",', 'W/12']) {
      expect(
        kindOf(() => ifMatchVersions(header)),
        header,
      ).toBe('BadRequest');
    }
  });
});

describe('assertIfMatch', () => {
  it('passes for the current version and answers 412 for any other', () => {
    expect(kindOf(() => assertIfMatch('"7", "9"', '9'))).toBeUndefined();
    expect(kindOf(() => assertIfMatch('"7"', '9'))).toBe('PreconditionFailed');
    expect(kindOf(() => assertIfMatch('W/"9"', '9'))).toBe('PreconditionFailed');
  });
});
