import { describe, expect, it } from 'vitest';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { startServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';

// Outages need a SpiceDB of this file's own: the shared one is never stopped.
const ITEM = 'urn:dx:item:authzen-outage';
const subject = { type: 'user', id: 'consumer' };
const resource = { type: 'resource', id: ITEM };
const action = { name: 'api' };

const REQUESTS: [string, unknown][] = [
  ['/access/v1/evaluation', { subject, resource, action }],
  ['/access/v1/evaluations', { subject, action, evaluations: [{ resource }, { resource }] }],
  ['/access/v1/search/resource', { subject, resource: { type: 'resource' }, action }],
  ['/access/v1/search/subject', { subject: { type: 'user' }, resource, action }],
  ['/access/v1/search/action', { subject, resource }],
];

describe('the AuthZEN routes fail closed', () => {
  it('answer 503 with decision false, never a permit, while SpiceDB is stopped', async () => {
    const { spicedb, service, stop } = await startServiceOnOwnSpiceDB('authzen-outage', {
      checkTimeoutMs: 1_000,
    });
    try {
      await service.afterWatchDelivers(() =>
        spicedb.client.writeRelationships([
          {
            operation: 'touch',
            relationship: {
              resource: { type: 'resource', id: encodeObjectId(ITEM) },
              relation: 'api_consumer',
              subject,
              expiresAt: new Date(Date.now() + 3_600_000),
            },
          },
        ]),
      );
      // Seen by a search, which no decision cache remembers: every evaluation below reaches SpiceDB.
      const found = await service.post<{ results: unknown[] }>(...(REQUESTS[2] as [string, unknown]));
      expect(found.body.results).toEqual([resource]);

      await spicedb.server.process.stop();
      for (const [path, body] of REQUESTS) {
        const { status, body: answer } = await service.post<{ decision?: boolean; detail?: string }>(
          path,
          body,
        );
        expect(status, path).toBe(503);
        expect(answer.decision, path).toBe(false);
        expect(answer.detail, path).toContain('spicedb');
      }
    } finally {
      await stop();
    }
  });
});
