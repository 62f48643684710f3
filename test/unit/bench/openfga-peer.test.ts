import { describe, expect, it } from 'vitest';
import {
  allowedInAnswer,
  checkBody,
  openfgaModel,
  tupleKeyOf,
  writeBody,
} from '../../../bench/support/openfga-peer.js';
import { loadRegistry } from '../../../src/spicedb/registry.js';

const store = { url: 'http://127.0.0.1:1', storeId: 'store-1', modelId: 'model-1' };
const resource = { type: 'resource', id: 'urn=3Adx=3Aitem' };
const members = { type: 'organization', id: 'org-1', relation: 'member' };
const json = (body: Buffer) => JSON.parse(body.toString()) as unknown;

describe('the benchmark peer: OpenFGA requests from SpiceDB relationships', () => {
  it('names a subject as a user, a userset as type:id#relation', () => {
    expect(tupleKeyOf({ resource, relation: 'editor', subject: { type: 'user', id: 'u-1' } })).toEqual({
      user: 'user:u-1',
      relation: 'editor',
      object: 'resource:urn=3Adx=3Aitem',
    });
    expect(tupleKeyOf({ resource, relation: 'api_consumer', subject: members }).user).toBe(
      'organization:org-1#member',
    );
  });

  it('checks at MINIMIZE_LATENCY with the model id', () => {
    const subject = { type: 'group', id: 'org-1|g', relation: 'member' };
    expect(json(checkBody(store, { resource, permission: 'viewer', subject }))).toEqual({
      tuple_key: { user: 'group:org-1|g#member', relation: 'viewer', object: 'resource:urn=3Adx=3Aitem' },
      authorization_model_id: 'model-1',
      consistency: 'MINIMIZE_LATENCY',
    });
  });

  it('writes touches and deletes with SpiceDB semantics, without the expiration', () => {
    const relationship = { resource, relation: 'api_consumer', subject: members };
    const expiresAt = new Date(0);
    const body = json(
      writeBody(store, [
        { operation: 'touch', relationship: { ...relationship, expiresAt } },
        { operation: 'delete', relationship: { ...relationship, relation: 'file_consumer' } },
      ]),
    );
    expect(body).toEqual({
      authorization_model_id: 'model-1',
      writes: { tuple_keys: [tupleKeyOf(relationship)], on_duplicate: 'ignore' },
      deletes: {
        tuple_keys: [tupleKeyOf({ ...relationship, relation: 'file_consumer' })],
        on_missing: 'ignore',
      },
    });
    expect(json(writeBody(store, [{ operation: 'delete', relationship }]))).not.toHaveProperty('writes');
  });

  it('reads only allowed: true as an allow', () => {
    expect(allowedInAnswer(Buffer.from('{"allowed":true,"resolution":""}'))).toBe(true);
    expect(allowedInAnswer(Buffer.from('{"allowed":false}'))).toBe(false);
    expect(allowedInAnswer(Buffer.from('{}'))).toBe(false);
  });

  it("models every access type's consumers, editor, direct_viewer and viewer of a resource", () => {
    const registry = loadRegistry();
    const definition = openfgaModel().type_definitions.find(({ type }) => type === 'resource');
    const consumers = registry.accessTypeNames().map((access) => registry.relationOfAccessType(access));
    expect(Object.keys(definition?.relations ?? {}).sort()).toEqual(
      [...consumers, 'editor', 'direct_viewer', 'viewer'].sort(),
    );
  });
});
