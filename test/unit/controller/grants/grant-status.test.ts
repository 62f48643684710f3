import { describe, expect, it } from 'vitest';
import { nextGrantStatus } from '../../../../src/controller/grants/grant-status.js';
import { NOW, policyGrant } from '../support/fakes.js';

/** The fakes' grants live in the ACL API's namespace. */
const IN_ACL_NAMESPACE = { kind: 'aclNamespace' } as const;

const LATER = new Date(NOW.getTime() + 60_000);

describe('nextGrantStatus', () => {
  it('describes an enforced grant: Enforced=True Projected, count, ZedToken, state, generations', () => {
    const grant = policyGrant('g', {}, { generation: 3 });
    const change = nextGrantStatus(
      grant,
      { kind: 'enforced', relationships: 2, zedToken: 'zt-1' },
      NOW,
      IN_ACL_NAMESPACE,
    );
    expect(change.status).toEqual({
      observedGeneration: 3,
      state: 'ACTIVE',
      conditions: [
        {
          type: 'Enforced',
          status: 'True',
          reason: 'Projected',
          message: '2 relationships written to SpiceDB',
          observedGeneration: 3,
          lastTransitionTime: '2026-06-01T12:00:00Z',
        },
        {
          type: 'Ready',
          status: 'True',
          reason: 'Projected',
          message: '2 relationships written to SpiceDB',
          observedGeneration: 3,
          lastTransitionTime: '2026-06-01T12:00:00Z',
        },
      ],
      relationships: 2,
      zedToken: 'zt-1',
      access: 'api',
      namespaceBinding: '<acl-namespace>',
    });
    expect(change.changed).toBe(true);
    expect(change.transition).toEqual({
      from: undefined,
      to: expect.objectContaining({ status: 'True', reason: 'Projected' }),
    });
  });

  it('says nothing changed when the status already says it all (no write, no event)', () => {
    const first = nextGrantStatus(
      policyGrant('g'),
      { kind: 'enforced', relationships: 1, zedToken: 'zt' },
      NOW,
      IN_ACL_NAMESPACE,
    );
    const grant = policyGrant('g', {}, {}, first.status);
    const again = nextGrantStatus(
      grant,
      { kind: 'enforced', relationships: 1, zedToken: 'zt' },
      LATER,
      IN_ACL_NAMESPACE,
    );
    expect(again).toMatchObject({ changed: false, transition: undefined });
  });

  it('records what was written, and sees no change when the API server returns its keys in another order', () => {
    const projected = { resource: 'resource:item', relations: ['api_consumer'], subjects: ['user:u'] };
    const outcome = { kind: 'enforced', relationships: 1, zedToken: 'zt', projected } as const;
    const first = nextGrantStatus(policyGrant('g'), outcome, NOW, IN_ACL_NAMESPACE);
    expect(first.status.projected).toEqual(projected);
    const served = { subjects: ['user:u'], relations: ['api_consumer'], resource: 'resource:item' };
    const grant = policyGrant('g', {}, {}, { ...first.status, projected: served });
    expect(nextGrantStatus(grant, outcome, LATER, IN_ACL_NAMESPACE).changed).toBe(false);
    const withdrawn = nextGrantStatus(
      grant,
      { kind: 'withheld', reason: 'Revoked', message: 'revoked', zedToken: 'zt-2' },
      LATER,
      IN_ACL_NAMESPACE,
    );
    expect(withdrawn.status.projected).toBeUndefined();
    const failed = nextGrantStatus(
      grant,
      { kind: 'failed', message: 'SpiceDB down' },
      LATER,
      IN_ACL_NAMESPACE,
    );
    expect(failed.status.projected).toEqual(served);
  });

  it('keeps lastTransitionTime while the condition status holds, and moves it when it flips', () => {
    const grant = policyGrant(
      'g',
      {},
      {},
      nextGrantStatus(policyGrant('g'), { kind: 'failed', message: 'down' }, NOW, IN_ACL_NAMESPACE).status,
    );
    const otherFailure = nextGrantStatus(
      grant,
      { kind: 'withheld', reason: 'ItemNotFound', message: 'gone', zedToken: undefined },
      LATER,
      IN_ACL_NAMESPACE,
    );
    expect(otherFailure.status.conditions?.[0]?.lastTransitionTime).toBe('2026-06-01T12:00:00Z');
    expect(otherFailure.transition).toEqual({
      from: { status: 'False', reason: 'ProjectionFailed' },
      to: { status: 'False', reason: 'ItemNotFound', message: 'gone' },
    });
    const enforced = nextGrantStatus(
      grant,
      { kind: 'enforced', relationships: 1, zedToken: 'zt' },
      LATER,
      IN_ACL_NAMESPACE,
    );
    expect(enforced.status.conditions?.[0]?.lastTransitionTime).toBe('2026-06-01T12:01:00Z');
  });

  it('on failure keeps the count and ZedToken of the last success: those tuples may still be there', () => {
    const enforced = nextGrantStatus(
      policyGrant('g'),
      { kind: 'enforced', relationships: 3, zedToken: 'zt-ok' },
      NOW,
      IN_ACL_NAMESPACE,
    );
    const failed = nextGrantStatus(
      policyGrant('g', {}, {}, enforced.status),
      { kind: 'failed', message: 'SpiceDB down' },
      LATER,
      IN_ACL_NAMESPACE,
    );
    expect(failed.status).toMatchObject({ relationships: 3, zedToken: 'zt-ok' });
    expect(failed.status.conditions?.[0]).toMatchObject({
      status: 'False',
      reason: 'ProjectionFailed',
      message: 'SpiceDB down',
    });
  });

  it('on withdrawal counts zero and keeps the last ZedToken unless the withdrawal wrote one', () => {
    const enforced = policyGrant(
      'g',
      {},
      {},
      nextGrantStatus(
        policyGrant('g'),
        { kind: 'enforced', relationships: 1, zedToken: 'a' },
        NOW,
        IN_ACL_NAMESPACE,
      ).status,
    );
    const kept = nextGrantStatus(
      enforced,
      { kind: 'withheld', reason: 'Conflict', message: 'm', zedToken: undefined },
      LATER,
      IN_ACL_NAMESPACE,
    );
    expect(kept.status).toMatchObject({ relationships: 0, zedToken: 'a' });
    const deleted = nextGrantStatus(
      enforced,
      { kind: 'withheld', reason: 'Revoked', message: 'm', zedToken: 'b' },
      LATER,
      IN_ACL_NAMESPACE,
    );
    expect(deleted.status).toMatchObject({ relationships: 0, zedToken: 'b' });
  });

  it('derives the state: DELETED once revoked, EXPIRED once past expiry', () => {
    const revoked = policyGrant('g', { revokedAt: '2026-05-01T00:00:00Z' });
    expect(
      nextGrantStatus(
        revoked,
        { kind: 'withheld', reason: 'Revoked', message: '', zedToken: 'z' },
        NOW,
        IN_ACL_NAMESPACE,
      ).status.state,
    ).toBe('DELETED');
    const expired = policyGrant('g', { expiryTime: '2026-01-01T00:00:00Z' });
    expect(
      nextGrantStatus(
        expired,
        { kind: 'withheld', reason: 'Expired', message: '', zedToken: 'z' },
        NOW,
        IN_ACL_NAMESPACE,
      ).status.state,
    ).toBe('EXPIRED');
  });

  it('shows the access types as one string, in the order of the spec, each once, whatever the outcome', () => {
    const grant = policyGrant('g', {
      constraints: { access: [{ accessType: 'file' }, { accessType: 'api' }, { accessType: 'file' }] },
    });
    const outcomes = [
      { kind: 'enforced', relationships: 2, zedToken: 'z' },
      { kind: 'withheld', reason: 'Conflict', message: 'm', zedToken: undefined },
      { kind: 'failed', message: 'down' },
    ] as const;
    for (const outcome of outcomes)
      expect(nextGrantStatus(grant, outcome, NOW, IN_ACL_NAMESPACE).status.access).toBe('file,api');
  });

  it("shows the namespace's binding, and a new binding is a change to write", () => {
    const outcome = { kind: 'withheld', reason: 'NotAuthorized', message: 'm', zedToken: 'z' } as const;
    const grant = policyGrant('g', {}, { namespace: 'team-a' });
    const unbound = nextGrantStatus(grant, outcome, NOW, { kind: 'unbound' });
    expect(unbound.status.namespaceBinding).toBe('<unbound>');
    const written = policyGrant('g', {}, { namespace: 'team-a' }, unbound.status);
    expect(nextGrantStatus(written, outcome, LATER, { kind: 'unbound' }).changed).toBe(false);
    const bound = nextGrantStatus(written, outcome, LATER, { kind: 'bound', organisationId: 'org-a' });
    expect(bound).toMatchObject({ changed: true, status: { namespaceBinding: 'org-a' } });
  });

  it('writes a status that lacks the access types (written by a version without them)', () => {
    const outcome = { kind: 'enforced', relationships: 1, zedToken: 'z' } as const;
    const { status } = nextGrantStatus(policyGrant('g'), outcome, NOW, IN_ACL_NAMESPACE);
    const older = policyGrant('g', {}, {}, { ...status, access: undefined });
    expect(nextGrantStatus(older, outcome, LATER, IN_ACL_NAMESPACE).changed).toBe(true);
  });

  it('bounds long messages', () => {
    const change = nextGrantStatus(
      policyGrant('g'),
      { kind: 'failed', message: 'x'.repeat(10_000) },
      NOW,
      IN_ACL_NAMESPACE,
    );
    expect(change.status.conditions?.[0]?.message).toHaveLength(4_096);
  });

  it('keeps conditions of other types', () => {
    const other = {
      type: 'Ready',
      status: 'True' as const,
      reason: 'Fine',
      message: '',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    const grant = policyGrant('g', {}, {}, { conditions: [other] });
    const change = nextGrantStatus(
      grant,
      { kind: 'enforced', relationships: 1, zedToken: 'z' },
      NOW,
      IN_ACL_NAMESPACE,
    );
    expect(change.status.conditions?.map((condition) => condition.type)).toEqual(['Ready', 'Enforced']);
  });
});
