import { describe, expect, it } from 'vitest';
import {
  ProjectionCoordinator,
  type ProjectionRecords,
} from '../../../src/controller/projection-coordinator.js';

/** A kind whose objects project the tuples listed for them, recording what it was told to forget. */
function kind(projects: Record<string, string[]>) {
  const forgotten: string[] = [];
  let cleared = 0;
  const records: ProjectionRecords = {
    keysProjecting: (key) => Object.keys(projects).filter((object) => projects[object]?.includes(key)),
    forget: (key) => forgotten.push(key),
    forgetAll: () => (cleared += 1),
  };
  const enqueued: string[] = [];
  const queue = { enqueue: (key: string) => enqueued.push(key) };
  return { records, queue, forgotten, enqueued, cleared: () => cleared };
}

describe('ProjectionCoordinator', () => {
  it('rechecks the objects of one kind that project a deleted tuple, all but the one that deleted it', () => {
    const coordinator = new ProjectionCoordinator();
    const grants = kind({ 'ns/a': ['t1'], 'ns/b': ['t1', 't2'], 'ns/c': ['t3'] });
    const memberships = kind({ 'acl/m': ['t1'] });
    coordinator.track('policygrant', grants.records);
    coordinator.bind('policygrant', grants.queue);
    coordinator.track('membership', memberships.records);
    coordinator.bind('membership', memberships.queue);

    coordinator.recheck('policygrant', ['t1'], 'ns/a');

    expect(grants.forgotten).toEqual(['ns/b']);
    expect(grants.enqueued).toEqual(['ns/b']);
    expect(memberships.enqueued).toEqual([]);
  });

  it('rechecks every kind for tuples the resync deleted', () => {
    const coordinator = new ProjectionCoordinator();
    const grants = kind({ 'ns/a': ['t1'] });
    const memberships = kind({ 'acl/m': ['t1'], 'acl/n': ['t2'] });
    coordinator.track('policygrant', grants.records);
    coordinator.bind('policygrant', grants.queue);
    coordinator.track('membership', memberships.records);
    coordinator.bind('membership', memberships.queue);

    coordinator.recheckAll(['t1']);

    expect(grants.enqueued).toEqual(['ns/a']);
    expect(memberships.enqueued).toEqual(['acl/m']);
  });

  it('after a SpiceDB recovery forgets every record and reconciles the kinds bound with a rewrite', () => {
    const coordinator = new ProjectionCoordinator();
    const grants = kind({});
    const delegations = kind({});
    const items = kind({});
    coordinator.track('policygrant', grants.records);
    coordinator.bind('policygrant', grants.queue, () => ['ns/a', 'ns/b']);
    coordinator.track('delegation', delegations.records);
    coordinator.bind('delegation', delegations.queue);
    coordinator.bind('catalogitem', items.queue, () => ['item']);

    coordinator.rewriteAll();

    expect([grants.cleared(), delegations.cleared()]).toEqual([1, 1]);
    expect(grants.enqueued).toEqual(['ns/a', 'ns/b']);
    expect(delegations.enqueued).toEqual([]);
    expect(items.enqueued).toEqual(['item']);
  });

  it('forgets every record when a term begins, without reconciling', () => {
    const coordinator = new ProjectionCoordinator();
    const grants = kind({ 'ns/a': ['t1'] });
    coordinator.track('policygrant', grants.records);
    coordinator.bind('policygrant', grants.queue, () => ['ns/a']);

    coordinator.forgetAll();

    expect(grants.cleared()).toBe(1);
    expect(grants.enqueued).toEqual([]);
  });
});
