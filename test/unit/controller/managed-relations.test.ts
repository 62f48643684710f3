import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { managedRelations } from '../../../src/controller/managed-relations.js';
import { parseRegistry, REGISTRY_FILE } from '../../../src/spicedb/registry.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
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

  it('lists each item object type once, however many item types map onto it', () => {
    const twoItemTypes = parseRegistry(
      readFileSync(REGISTRY_FILE, 'utf8').replace(
        '  DATABANK: resource\n',
        '  DATABANK: resource\n  OTHER: resource\n',
      ),
      readSchemaText(),
    );
    expect(twoItemTypes.itemTypeNames()).toEqual(['DATABANK', 'OTHER']);
    expect(managedRelations(twoItemTypes)).toEqual(managedRelations(registry));
  });
});
