import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import { resolveToolPaths } from '../../../dev/localplane/tool-paths.js';
import { individual, useControllerFixture } from '../controller/support/harness.js';
import { controlPlane } from '../support/cluster.js';

// What kubectl shows of a PolicyGrant, through the real kube-apiserver's table output (the CRD's printer
// columns) and `kubectl describe`: the Enforced reason and message with -o wide, and the condition message
// that says why a grant is not enforced. A column prints only the first match of its JSONPath, so
// `access[*].accessType` would show one access type of several: the column shows the list itself.

const world = useControllerFixture('printer-columns');
const run = promisify(execFile);
let kubectlBin: string;

beforeAll(async () => {
  kubectlBin = controlPlane().tools.kubectl ?? (await resolveToolPaths()).kubectl;
});

async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(kubectlBin, ['--kubeconfig', controlPlane().kubeconfigPath, ...args]);
  return stdout;
}

/** The cells of the table's row `name`, by column header. */
async function row(namespace: string, name: string, wide = false): Promise<Record<string, string>> {
  const output = await kubectl('get', 'policygrants', '-n', namespace, name, ...(wide ? ['-o', 'wide'] : []));
  const [header = '', line = ''] = output.trimEnd().split('\n');
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((match) => match.index);
  const headers = header.split(/\s{2,}/);
  return Object.fromEntries(
    headers.map((title, index) => [title, line.slice(starts[index], starts[index + 1]).trim()]),
  );
}

describe('kubectl get and describe of PolicyGrants', () => {
  it('shows every access type and, with -o wide, why a grant is not enforced', async () => {
    const item = await world.resources.createItem();
    const enforced = await world.resources.createGrant(
      world.aclNamespace,
      individual(item.spec.itemId, ['api', 'file']),
    );
    const unbound = await world.resources.namespace('unbound');
    const refused = await world.resources.createGrant(unbound, individual(item.spec.itemId, ['sub']));
    await world.resources.waitForReason(world.aclNamespace, enforced.name, EnforcedReason.Projected);
    await world.resources.waitForReason(unbound, refused.name, EnforcedReason.NotAuthorized);

    expect(await row(world.aclNamespace, enforced.name)).toMatchObject({
      ACCESS: '[{"accessType":"api"},{"accessType":"file"}]',
      ENFORCED: 'True',
    });
    expect(await row(unbound, refused.name, true)).toMatchObject({
      ACCESS: '[{"accessType":"sub"}]',
      ENFORCED: 'False',
      REASON: 'NotAuthorized',
      MESSAGE: expect.stringContaining(`namespace "${unbound}" is not bound to an organisation`),
    });
    const described = await kubectl('describe', 'policygrant', '-n', unbound, refused.name);
    expect(described).toMatch(/Reason:\s+NotAuthorized/);
    expect(described).toContain(`namespace "${unbound}" is not bound to an organisation`);
  });
});
