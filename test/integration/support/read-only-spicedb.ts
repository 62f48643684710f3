import { expect } from 'vitest';
import type { SpiceDBServer } from '../../../dev/localplane/spicedb-server.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import { uniqueId } from './cluster.js';

/**
 * Asserts that `readOnly`'s key cannot write a relationship ("read-only"), while `writer`'s key on the same
 * datastore writes the same one (after putting the project's schema there).
 */
export async function expectWritesRefused(readOnly: SpiceDBServer, writer: SpiceDBServer): Promise<void> {
  const writes = plaintext(writer);
  const refused = plaintext(readOnly);
  try {
    await writes.ensureSchema(readSchemaText());
    const relationship = {
      resource: { type: 'resource', id: encodeObjectId(`urn:dx:item:${uniqueId('read-only')}`) },
      relation: 'api_consumer',
      subject: { type: 'user', id: uniqueId('user') },
      expiresAt: new Date(Date.now() + 3_600_000),
    };
    await expect(refused.writeRelationships([{ operation: 'touch', relationship }])).rejects.toThrow(
      /read-?only/i,
    );
    expect(await writes.writeRelationships([{ operation: 'touch', relationship }])).not.toBe('');
  } finally {
    refused.close();
    writes.close();
  }
}

function plaintext({ endpoint, token }: SpiceDBServer): SpiceDBClient {
  return new SpiceDBClient({ endpoint, token, transport: 'plaintext' });
}
