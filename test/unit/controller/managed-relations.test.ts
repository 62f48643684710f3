import { describe, expect, it } from 'vitest';
import { managedRelations, registryNames } from '../../../src/controller/managed-relations.js';
import { registry } from './support/fakes.js';

describe('managedRelations', () => {
  it('lists the owner relation and one relation per access type on each item object type', () => {
    expect(managedRelations(registry)).toEqual([
      { objectType: 'resource', relation: 'owner' },
      { objectType: 'resource', relation: 'api_consumer' },
      { objectType: 'resource', relation: 'file_consumer' },
      { objectType: 'resource', relation: 'sub_consumer' },
    ]);
  });

  it('reads the names from the registry file, and skips names the registry cannot resolve', () => {
    expect(
      registryNames('itemTypes: {A: resource, B: resource}\naccessTypes: {api: api_consumer}\n'),
    ).toEqual({
      itemTypes: ['A', 'B'],
      accessTypes: ['api'],
    });
    expect(
      managedRelations(registry, { itemTypes: ['DATABANK', 'UNKNOWN'], accessTypes: ['api', 'unknown'] }),
    ).toEqual([
      { objectType: 'resource', relation: 'owner' },
      { objectType: 'resource', relation: 'api_consumer' },
    ]);
  });
});
