import { describe, expect, it } from 'vitest';
import { decisionReplicaCount, devSearchEnv } from '../../../dev/stack/decision-env.js';

describe("the development stack's decision services", () => {
  it('run one replica unless DEV_DECISION_REPLICAS asks for 1 to 9', () => {
    expect(decisionReplicaCount({})).toBe(1);
    expect(decisionReplicaCount({ DEV_DECISION_REPLICAS: '3' })).toBe(3);
    for (const wrong of ['0', '10', '2.5', 'three']) {
      expect(() => decisionReplicaCount({ DEV_DECISION_REPLICAS: wrong })).toThrow(
        `DEV_DECISION_REPLICAS must be a whole number from 1 to 9, not "${wrong}"`,
      );
    }
  });

  it('let search_client and platform_search_client search, with one page token key for every replica', () => {
    const defaults = devSearchEnv({});
    expect(defaults).toMatchObject({
      DECISION_SEARCH_ROLES: 'search_client',
      DECISION_SEARCH_PLATFORM_ROLES: 'platform_search_client',
    });
    expect(defaults.PAGE_TOKEN_KEYS?.length).toBeGreaterThanOrEqual(32);
    expect(devSearchEnv({})).toEqual(defaults);
    const chosen = {
      DECISION_SEARCH_ROLES: 'a',
      DECISION_SEARCH_PLATFORM_ROLES: 'b',
      PAGE_TOKEN_KEYS: 'k'.repeat(32),
    };
    expect(devSearchEnv(chosen)).toEqual(chosen);
  });
});
