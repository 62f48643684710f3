import { describe, expect, it } from 'vitest';
import type { Delegation } from '../../../../src/api/v1alpha1/index.js';
import {
  delegationKind,
  delegationWithdrawal,
  projectDelegation,
} from '../../../../src/controller/delegations/delegation-projection.js';
import { InvalidObjectIdError } from '../../../../src/spicedb/object-id.js';
import { loadRegistry } from '../../../../src/spicedb/registry.js';
import { tupleKey } from '../../../../src/verdict/tuple-key.js';
import { NOW, USER } from '../support/fakes.js';

const registry = loadRegistry();
const OTHER_OWNER = '00000000-0000-0000-0000-0000000000ff';
const LATER = new Date(NOW.getTime() + 3_600_000).toISOString();

function delegation(
  spec: Partial<Delegation['spec']> = {},
  metadata: Delegation['metadata'] = {},
): Delegation {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'Delegation',
    metadata: { name: 'd', namespace: 'acl', generation: 1, ...metadata },
    spec: {
      agentId: 'urn:agent:7',
      ownerId: USER,
      itemId: 'urn:dx:item:1',
      relation: 'querier',
      expiryTime: LATER,
      ...spec,
    },
  };
}

describe('the projection of a delegation', () => {
  it('delegates the relation to the agent until expiry, and makes the owner the agent’s owner both ways', () => {
    const relationships = projectDelegation(delegation().spec, registry);
    expect(relationships.map(tupleKey)).toEqual([
      'resource:urn=3Adx=3Aitem=3A1#querier_delegate@agent:urn=3Aagent=3A7',
      `agent:urn=3Aagent=3A7#owner@user:${USER}`,
      `user:${USER}#agent@agent:urn=3Aagent=3A7`,
    ]);
    expect(relationships[0]?.expiresAt).toEqual(new Date(LATER));
    expect(projectDelegation(delegation({ relation: 'editor' }).spec, registry)[0]?.relation).toBe(
      'editor_delegate',
    );
  });

  it('refuses an id that cannot be a SpiceDB object id', () => {
    expect(() => projectDelegation(delegation({ agentId: '' }).spec, registry)).toThrow(InvalidObjectIdError);
  });
});

describe('whether a delegation counts', () => {
  it.each<[string, Delegation, string | undefined, string | undefined]>([
    ['an active delegation of its owner’s agent', delegation(), USER, undefined],
    ['a revoked one', delegation({ revokedAt: NOW.toISOString() }), USER, 'Revoked'],
    ['one being deleted', delegation({}, { deletionTimestamp: NOW }), USER, 'Revoked'],
    ['an expired one', delegation({ expiryTime: NOW.toISOString() }), USER, 'Expired'],
    ['one whose agent belongs to another user', delegation(), OTHER_OWNER, 'NotOwner'],
    ['one whose agent has no Agent object', delegation(), undefined, 'NotOwner'],
  ])('%s', (_, object, owner, reason) => {
    expect(delegationWithdrawal(object, owner, NOW)?.reason).toBe(reason);
  });

  it('asks the Agent objects for the owner, and stops counting at expiry by itself', () => {
    const kind = delegationKind({ registry, ownerOf: () => USER, now: () => NOW });
    expect(kind.withdrawal(delegation())).toBeUndefined();
    expect(kind.countsUntil?.(delegation())).toEqual(new Date(LATER));
    expect(kind.relations).toContainEqual({ objectType: 'user', relation: 'agent' });
  });
});
