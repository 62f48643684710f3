import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  EnforcedReason,
  GROUP_VERSION,
  POLICY_GRANT_KIND,
  POLICY_GRANT_RESOURCE,
  type PolicyGrantSpec,
} from '../../../src/api/v1alpha1/index.js';
import { collectionPath } from '../../../src/kube/index.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { resolveToolPaths } from '../../../dev/localplane/tool-paths.js';
import { individual, useControllerFixture } from '../controller/support/harness.js';
import { controlPlane, testKubeClient } from '../support/cluster.js';

// What kubectl shows of a PolicyGrant, through the real kube-apiserver's table output (the CRD's printer
// columns) and `kubectl describe`: the access types as `api,file`, the namespace binding, and with -o wide the
// Enforced reason and the message that says why a grant is not enforced, for every reason of the verdict.

const fixture = useControllerFixture('printer-columns');
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

/** The Message of the Enforced condition as `kubectl describe` prints it. */
async function describedMessage(namespace: string, name: string): Promise<string | undefined> {
  const described = await kubectl('describe', 'policygrant', '-n', namespace, name);
  // Each condition's fields start with its Last Transition Time (describe sorts the fields).
  const conditions = described.slice(described.indexOf('Conditions:')).split('Last Transition Time:');
  const enforced = conditions.find((text) => /Type:\s+Enforced\b/.test(text));
  return enforced?.match(/Message:\s+(.*)/)?.[1];
}

describe('kubectl get policygrants', () => {
  it('shows every access type as api,file and, with -o wide, the binding and why a grant is not enforced', async () => {
    const item = await fixture.resources.createItem();
    const enforced = await fixture.resources.createGrant(
      fixture.aclNamespace,
      individual(item.spec.itemId, ['api', 'file']),
    );
    const unbound = await fixture.resources.namespace('unbound');
    const refused = await fixture.resources.createGrant(unbound, individual(item.spec.itemId, ['sub']));
    await fixture.resources.waitForReason(fixture.aclNamespace, enforced.name, EnforcedReason.Projected);
    await fixture.resources.waitForReason(unbound, refused.name, EnforcedReason.NotAuthorized);

    expect(await row(fixture.aclNamespace, enforced.name)).toMatchObject({
      ACCESS: 'api,file',
      ENFORCED: 'True',
    });
    expect(await row(fixture.aclNamespace, enforced.name, true)).toMatchObject({
      BINDING: '<acl-namespace>',
    });
    expect(await row(unbound, refused.name, true)).toMatchObject({
      ACCESS: 'sub',
      ENFORCED: 'False',
      BINDING: '<unbound>',
      REASON: 'NotAuthorized',
      MESSAGE: expect.stringContaining(`namespace "${unbound}" is not bound to an organisation`),
    });
  });

  it("follows the namespace's binding label: bound, rebound to another organisation, unbound", async () => {
    const item = await fixture.resources.createItem();
    const namespace = await fixture.resources.namespace('team');
    const grant = await fixture.resources.createGrant(namespace, individual(item.spec.itemId));
    await fixture.resources.waitForReason(namespace, grant.name, EnforcedReason.NotAuthorized);
    const columns = async () => {
      const { BINDING, REASON } = await row(namespace, grant.name, true);
      return { BINDING, REASON };
    };
    expect(await columns()).toEqual({ BINDING: '<unbound>', REASON: 'NotAuthorized' });

    await fixture.resources.labelNamespace(namespace, { [ORGANISATION_LABEL]: item.spec.organisationId });
    await expect.poll(columns).toEqual({ BINDING: item.spec.organisationId, REASON: 'Projected' });
    const other = randomUUID();
    await fixture.resources.labelNamespace(namespace, { [ORGANISATION_LABEL]: other });
    await expect.poll(columns).toEqual({ BINDING: other, REASON: 'NotAuthorized' });
    await fixture.resources.labelNamespace(namespace, { [ORGANISATION_LABEL]: null });
    await expect.poll(columns).toEqual({ BINDING: '<unbound>', REASON: 'NotAuthorized' });
  });

  it('shows an edit of the access types once the controller has acted on it', async () => {
    const item = await fixture.resources.createItem();
    const grant = await fixture.resources.createGrant(
      fixture.aclNamespace,
      individual(item.spec.itemId, ['api']),
    );
    await fixture.resources.waitForReason(fixture.aclNamespace, grant.name, EnforcedReason.Projected);
    await fixture.resources.updateGrantSpec(fixture.aclNamespace, grant.name, (spec) => ({
      ...spec,
      constraints: { access: [{ accessType: 'sub' }, { accessType: 'api' }] },
    }));
    await fixture.resources.waitForReason(fixture.aclNamespace, grant.name, EnforcedReason.Projected);
    expect((await row(fixture.aclNamespace, grant.name)).ACCESS).toBe('sub,api');
  });

  it('leaves ACCESS and BINDING empty until the controller first writes the status', async () => {
    const item = await fixture.resources.createItem();
    const namespace = await fixture.resources.namespace('unreconciled');
    // Without the scope label no controller of the run reconciles it: a grant no controller has seen yet.
    const name = `grant-${randomUUID().slice(0, 8)}`;
    const spec: PolicyGrantSpec = individual(item.spec.itemId, ['api', 'file']);
    await testKubeClient().call({
      method: 'POST',
      path: collectionPath(POLICY_GRANT_RESOURCE, namespace),
      body: { apiVersion: GROUP_VERSION, kind: POLICY_GRANT_KIND, metadata: { name }, spec },
    });
    expect(await row(namespace, name, true)).toMatchObject({ ACCESS: '', BINDING: '', ENFORCED: '' });
  });
});

/** A grant the verdict refuses, and what its condition message must name. */
interface Refusal {
  namespace: string;
  name: string;
  reason: string;
  says: string[];
}

/** An item of a fresh organisation and an api grant on it, in the ACL namespace unless said otherwise. */
async function grantOn(
  options: { namespace?: string; itemType?: string; spec?: Partial<PolicyGrantSpec> } = {},
) {
  const item = await fixture.resources.createItem({ itemType: options.itemType ?? 'DATABANK' });
  const namespace = options.namespace ?? fixture.aclNamespace;
  const { name, spec } = await fixture.resources.createGrant(namespace, {
    ...individual(item.spec.itemId),
    ...options.spec,
  });
  return { item, namespace, name, spec };
}

const refusals: [string, () => Promise<Refusal>][] = [
  [
    'revoked',
    async () => {
      const grant = await grantOn();
      const revoked = await fixture.resources.revoke(grant.namespace, grant.name);
      return {
        ...grant,
        reason: 'Revoked',
        says: [`revoked at ${revoked.spec.revokedAt}`, `by ${revoked.spec.revokedBy}`],
      };
    },
  ],
  [
    'expired',
    async () => {
      const expiryTime = new Date(Date.now() - 86_400_000).toISOString();
      const grant = await grantOn({ spec: { expiryTime } });
      return { ...grant, reason: 'Expired', says: [`expired at ${expiryTime}`] };
    },
  ],
  [
    'in a namespace bound to no organisation',
    async () => {
      const namespace = await fixture.resources.namespace('unbound');
      const grant = await grantOn({ namespace });
      return {
        ...grant,
        reason: 'NotAuthorized',
        says: [
          `namespace "${namespace}" is not bound to an organisation`,
          `${ORGANISATION_LABEL}=${grant.item.spec.organisationId}`,
        ],
      };
    },
  ],
  [
    'in a namespace bound to another organisation',
    async () => {
      const other = randomUUID();
      const namespace = await fixture.resources.namespace('other', { [ORGANISATION_LABEL]: other });
      const grant = await grantOn({ namespace });
      return {
        ...grant,
        reason: 'NotAuthorized',
        says: [`namespace "${namespace}" is bound to organisation ${other}`, grant.item.spec.organisationId],
      };
    },
  ],
  [
    'on a missing item',
    async () => {
      const itemId = `urn:dx:item:missing-${randomUUID()}`;
      const grant = await grantOn({ spec: { itemId } });
      return { ...grant, reason: 'ItemNotFound', says: [`no CatalogItem has itemId "${itemId}"`] };
    },
  ],
  [
    'on an ambiguous item',
    async () => {
      const grant = await grantOn();
      const twin = await fixture.resources.createItem({ itemId: grant.item.spec.itemId });
      return {
        ...grant,
        reason: 'ItemNotFound',
        says: ['is ambiguous', grant.item.name, twin.name],
      };
    },
  ],
  [
    'on an item of another type',
    async () => {
      const grant = await grantOn({ itemType: 'DATASET' });
      return {
        ...grant,
        reason: 'ItemNotFound',
        says: [`CatalogItem ${grant.item.name}`, 'with itemType DATASET, not DATABANK'],
      };
    },
  ],
  [
    'whose access type the item withdrew',
    async () => {
      const grant = await grantOn();
      await fixture.resources.updateItemSpec(grant.item.name, { accessTypes: ['file'] });
      return {
        ...grant,
        reason: 'AccessTypeNotAllowed',
        says: [`CatalogItem ${grant.item.name} does not allow access type "api"`, '(allowed: file)'],
      };
    },
  ],
  [
    'younger than a grant of the same access',
    async () => {
      const older = await grantOn();
      await fixture.resources.waitForReason(older.namespace, older.name, EnforcedReason.Projected);
      const younger = await fixture.resources.createGrant(
        older.namespace,
        older.spec,
        `${older.name}-younger`,
      );
      return {
        ...older,
        name: younger.name,
        reason: 'Conflict',
        says: [`the older grant ${older.namespace}/${older.name}`, 'already gives the same access'],
      };
    },
  ],
];

describe('kubectl describe of a grant that is not effective', () => {
  it.each(refusals)('names why, for a grant %s', async (_what, arrange) => {
    const { namespace, name, reason, says } = await arrange();
    await fixture.resources.waitForReason(namespace, name, reason);
    const message = await describedMessage(namespace, name);
    for (const words of says) expect(message).toContain(words);
    expect((await row(namespace, name, true)).REASON).toBe(reason);
  });
});
