import { describe, expect, it } from 'vitest';
import { uniqueId } from '../support/cluster.js';
import { kubectl, renderChart, REQUIRED_VALUES, toYamlStream, type KubeObject } from './packaging-support.js';

// The chart's roles for users, on the real kube-apiserver: they are aggregated into the cluster's view, edit and
// admin by label, and what they allow is what `kubectl auth can-i` answers for a user bound to them.

const AGGREGATE_TO = 'rbac.authorization.k8s.io/aggregate-to-';

async function userRoles(release: string, values: object = REQUIRED_VALUES): Promise<KubeObject[]> {
  return (await renderChart('policy-grant-system', values, release)).filter(
    (object) => object.metadata.labels?.['app.kubernetes.io/component'] === 'user-roles',
  );
}

function aggregatedInto(role: KubeObject | undefined): string[] {
  return Object.keys(role?.metadata.labels ?? {})
    .filter((label) => label.startsWith(AGGREGATE_TO))
    .map((label) => label.slice(AGGREGATE_TO.length))
    .sort();
}

async function canI(user: string, namespace: string, verb: string, resource: string, ...more: string[]) {
  const answer = await kubectl(['auth', 'can-i', verb, resource, '-n', namespace, '--as', user, ...more]);
  return answer.stdout.trim();
}

describe('roles for users', () => {
  it('are aggregated: view into view, edit and admin; edit into edit and admin', async () => {
    const [view, edit] = await userRoles('pgo');
    expect([view?.metadata.name, aggregatedInto(view)]).toEqual([
      'pgo-policy-grant-operator-view',
      ['admin', 'edit', 'view'],
    ]);
    expect([edit?.metadata.name, aggregatedInto(edit)]).toEqual([
      'pgo-policy-grant-operator-edit',
      ['admin', 'edit'],
    ]);
  });

  it('are left out when the values turn them off', async () => {
    expect(await userRoles('pgo', { ...REQUIRED_VALUES, userRoles: { view: false, edit: false } })).toEqual(
      [],
    );
  });

  it('let a viewer read every kind but write none, and an editor apply PolicyGrants but not their status', async () => {
    const release = uniqueId('roles');
    const namespace = uniqueId('user-roles');
    const [view, edit] = await userRoles(release);
    const viewer = `viewer-${namespace}`;
    const editor = `editor-${namespace}`;
    const binding = (user: string, role: KubeObject | undefined) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: user, namespace },
      subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }],
      roleRef: { kind: 'ClusterRole', name: role?.metadata.name, apiGroup: 'rbac.authorization.k8s.io' },
    });
    const objects = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      view,
      edit,
      binding(viewer, view),
      binding(editor, view),
      { ...binding(editor, edit), metadata: { name: `${editor}-edit`, namespace } },
    ];
    const applied = await kubectl(['apply', '-f', '-'], toYamlStream(objects as object[]));
    expect(applied.stderr).toBe('');
    try {
      for (const kind of ['policygrants', 'memberships', 'delegations', 'agents', 'accessrequests'])
        expect(await canI(viewer, namespace, 'list', `${kind}.acl.policygrant.dev`)).toBe('yes');
      expect(await canI(viewer, namespace, 'create', 'policygrants.acl.policygrant.dev')).toBe('no');
      expect(await canI(editor, namespace, 'create', 'policygrants.acl.policygrant.dev')).toBe('yes');
      expect(
        await canI(editor, namespace, 'update', 'policygrants.acl.policygrant.dev', '--subresource=status'),
      ).toBe('no');
      expect(await canI(editor, namespace, 'create', 'memberships.acl.policygrant.dev')).toBe('no');
    } finally {
      await kubectl(['delete', 'namespace', namespace, '--wait=false']);
      await kubectl(['delete', 'clusterrole', String(view?.metadata.name), String(edit?.metadata.name)]);
    }
  });
});
