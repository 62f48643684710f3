import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../hack/sync-packaging.js';
import { RELATIONSHIPS_FINALIZER } from '../../../src/api/v1alpha1/index.js';
import { controlPlane, createTestNamespace } from '../support/cluster.js';
import { kubectl, packagingTools, toYamlStream } from './packaging-support.js';

// The uninstall runbook's last resort (docs/upgrade.md): with no controller running, grants being deleted keep
// their finalizer for ever; hack/release-finalizers.sh removes exactly that finalizer, and they go.

const run = promisify(execFile);
const OTHER_FINALIZER = 'example.com/keep-me';

function grant(namespace: string, name: string, finalizers: string[]) {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'PolicyGrant',
    metadata: { name, namespace, finalizers },
    spec: {
      policyType: 'INDIVIDUAL',
      userId: '3f1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d',
      itemId: `urn:dx:cat:item:${name}`,
      itemType: 'DATABANK',
      expiryTime: '2099-12-31T23:59:59Z',
      constraints: { access: [{ accessType: 'api' }] },
    },
  };
}

async function finalizersOf(namespace: string, name: string): Promise<string[] | 'gone'> {
  const result = await kubectl(['get', 'policygrant', name, '-n', namespace, '-o', 'json']);
  if (result.stderr.includes('NotFound')) return 'gone';
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { metadata: { finalizers?: string[] } }).metadata.finalizers ?? [];
}

async function releaseFinalizers(namespace: string): Promise<void> {
  await run('bash', [join(REPO_ROOT, 'hack/release-finalizers.sh'), namespace], {
    env: {
      ...process.env,
      KUBECTL: (await packagingTools()).kubectl,
      KUBECONFIG: controlPlane().kubeconfigPath,
    },
  });
}

describe('hack/release-finalizers.sh', () => {
  it('lets grants being deleted go without a controller, removing only the controller’s finalizer', async () => {
    const namespace = await createTestNamespace('release-finalizers');
    const untouched = await createTestNamespace('release-finalizers-other');
    const grants = [
      grant(namespace, 'ours-only', [RELATIONSHIPS_FINALIZER]),
      grant(namespace, 'shared', [OTHER_FINALIZER, RELATIONSHIPS_FINALIZER]),
      grant(untouched, 'elsewhere', [RELATIONSHIPS_FINALIZER]),
    ];
    expect((await kubectl(['create', '-f', '-'], toYamlStream(grants))).code).toBe(0);
    for (const { metadata } of grants)
      expect(
        (await kubectl(['delete', 'policygrant', metadata.name, '-n', metadata.namespace, '--wait=false']))
          .code,
      ).toBe(0);
    expect(await finalizersOf(namespace, 'ours-only')).toEqual([RELATIONSHIPS_FINALIZER]);

    await releaseFinalizers(namespace);

    expect(await finalizersOf(namespace, 'ours-only')).toBe('gone');
    expect(await finalizersOf(namespace, 'shared')).toEqual([OTHER_FINALIZER]);
    expect(await finalizersOf(untouched, 'elsewhere')).toEqual([RELATIONSHIPS_FINALIZER]);

    await releaseFinalizers(untouched);
    expect(await finalizersOf(untouched, 'elsewhere')).toBe('gone');
    const patch = JSON.stringify({ metadata: { finalizers: null } });
    await kubectl(['patch', 'policygrant', 'shared', '-n', namespace, '--type', 'merge', '-p', patch]);
  });
});
