import { describe, expect, it } from 'vitest';
import { objectOfTupleKey, parseTupleKey, tupleKey } from '../../../src/verdict/tuple-key.js';
import type { Relationship } from '../../../src/spicedb/client.js';

const userTuple: Relationship = {
  resource: { type: 'resource', id: 'urn=3Adx=3Aitem=3A1' },
  relation: 'api_consumer',
  subject: { type: 'user', id: '3f1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d' },
};
const groupTuple: Relationship = {
  resource: { type: 'resource', id: 'urn=3Adx=3Aitem=3A1' },
  relation: 'sub_consumer',
  subject: { type: 'organization', id: 'org-1', relation: 'member' },
};

describe('tuple keys', () => {
  it("are SpiceDB's notation, with the subject relation when there is one", () => {
    expect(tupleKey(userTuple)).toBe(
      'resource:urn=3Adx=3Aitem=3A1#api_consumer@user:3f1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d',
    );
    expect(tupleKey(groupTuple)).toBe('resource:urn=3Adx=3Aitem=3A1#sub_consumer@organization:org-1#member');
  });

  it('ignore the expiration: one tuple per key, whatever it expires at', () => {
    expect(tupleKey({ ...userTuple, expiresAt: new Date('2030-01-01T00:00:00Z') })).toBe(tupleKey(userTuple));
  });

  it('parse back into the relationship', () => {
    expect(parseTupleKey(tupleKey(userTuple))).toEqual(userTuple);
    expect(parseTupleKey(tupleKey(groupTuple))).toEqual(groupTuple);
    expect(parseTupleKey('group:org|team#member@user:u')).toEqual({
      resource: { type: 'group', id: 'org|team' },
      relation: 'member',
      subject: { type: 'user', id: 'u' },
    });
  });

  it('refuse what is not a key', () => {
    for (const bad of [
      '',
      'resource:x',
      'resource:x#rel',
      'resource:x#rel@user',
      'Resource:x#rel@user:u',
      'resource:a:b#rel@user:u',
    ]) {
      expect(() => parseTupleKey(bad), bad).toThrow(/not a tuple key/);
    }
  });

  it('name the object a tuple is on', () => {
    expect(objectOfTupleKey(tupleKey(groupTuple))).toBe('resource:urn=3Adx=3Aitem=3A1');
  });
});
