import { describe, expect, it } from 'vitest';
import {
  awaitsEnforcement,
  failsProjection,
  GrantMetrics,
  registerMembershipMetrics,
} from '../../../src/controller/controller-metrics.js';
import { nextMembershipStatus } from '../../../src/controller/memberships/membership-status.js';
import { nextGrantStatus } from '../../../src/controller/grants/grant-status.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { membership, NOW, policyGrant } from './support/fakes.js';

const enforcedStatus = nextGrantStatus(
  policyGrant('g'),
  { kind: 'enforced', relationships: 1, zedToken: 'z' },
  NOW,
  { kind: 'aclNamespace' },
).status;
const failedStatus = nextGrantStatus(policyGrant('g'), { kind: 'failed', message: 'down' }, NOW, {
  kind: 'aclNamespace',
}).status;

describe('the backlog and dead-letter gauges', () => {
  it('count a grant as awaiting enforcement until its status matches its generation and state', () => {
    expect(awaitsEnforcement(policyGrant('new'), NOW)).toBe(true);
    expect(awaitsEnforcement(policyGrant('done', {}, {}, enforcedStatus), NOW)).toBe(false);
    expect(awaitsEnforcement(policyGrant('edited', {}, { generation: 2 }, enforcedStatus), NOW)).toBe(true);
    expect(
      awaitsEnforcement(
        policyGrant('revoked', { revokedAt: '2026-05-01T00:00:00Z' }, {}, enforcedStatus),
        NOW,
      ),
    ).toBe(true);
    expect(
      awaitsEnforcement(policyGrant('lapsed', {}, {}, enforcedStatus), new Date('2100-01-01T00:00:00Z')),
    ).toBe(true);
  });

  it('count grants whose projection failed', () => {
    expect(failsProjection(policyGrant('f', {}, {}, failedStatus))).toBe(true);
    expect(failsProjection(policyGrant('ok', {}, {}, enforcedStatus))).toBe(false);
    expect(failsProjection(policyGrant('new'))).toBe(false);
  });

  it('are computed from the cache when scraped', async () => {
    const registry = createMetricsRegistry();
    const grants = [
      policyGrant('a'),
      policyGrant('b', {}, {}, failedStatus),
      policyGrant('c', {}, {}, enforcedStatus),
    ];
    new GrantMetrics(registry, () => grants);
    const text = await registry.metrics();
    expect(text).toMatch(/^policygrant_unenforced_grants 1$/m);
    expect(text).toMatch(/^policygrant_projection_failed_grants 1$/m);
    expect(text).toMatch(/^policygrant_drift_repaired_total{direction="missing"} 0$/m);
  });

  it('count the Memberships whose projection keeps failing as dead letters', async () => {
    const registry = createMetricsRegistry();
    const failed = membership('failed');
    const memberships = [
      { ...failed, status: nextMembershipStatus(failed, { kind: 'failed', message: 'down' }, NOW).status },
      membership('new'),
    ];
    registerMembershipMetrics(registry, () => memberships);
    expect(await registry.metrics()).toMatch(/^policygrant_membership_dead_letter 1$/m);
  });
});
