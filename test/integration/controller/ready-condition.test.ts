import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { kubectl } from '../packaging/packaging-support.js';
import { individual, useControllerFixture } from './support/harness.js';

// What GitOps tools read: kstatus (Flux's --wait), Argo CD's health check and `kubectl wait` look for a Ready
// condition. It summarises Enforced: True when the object is as its spec asks (enforced, or revoked, expired,
// removed), False with Enforced's reason when the verdict refuses it or its write failed. Real kube-apiserver,
// controller and SpiceDB; the pinned kubectl.
const fixture = useControllerFixture('ready-condition');
const WAIT = `--timeout=${POLL_TIMEOUT_MS / 1000}s`;

/** `kubectl wait` for the condition, then the Ready condition's status and reason as kubectl prints them. */
async function waitFor(kind: string, namespace: string, name: string, condition: string): Promise<string> {
  const wait = await kubectl([
    'wait',
    '-n',
    namespace,
    `${kind}/${name}`,
    `--for=condition=${condition}`,
    WAIT,
  ]);
  expect(wait.stderr).toBe('');
  expect(wait.code).toBe(0);
  const jsonPath =
    '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}';
  return (await kubectl(['get', '-n', namespace, `${kind}/${name}`, '-o', `jsonpath=${jsonPath}`])).stdout;
}

describe('the Ready condition, as kubectl wait reads it', () => {
  it('is True once a grant is enforced, and stays True once it is revoked', async () => {
    const item = await fixture.resources.createItem();
    const { name } = await fixture.resources.createGrant(fixture.aclNamespace, individual(item.spec.itemId));
    expect(await waitFor('policygrant', fixture.aclNamespace, name, 'Ready')).toBe('True Projected');

    await fixture.resources.revoke(fixture.aclNamespace, name);
    await fixture.resources.waitForReason(fixture.aclNamespace, name, 'Revoked');
    expect(await waitFor('policygrant', fixture.aclNamespace, name, 'Ready')).toBe('True Revoked');
  });

  it('is False, naming the verdict’s reason, for a grant that is refused', async () => {
    const { name } = await fixture.resources.createGrant(
      fixture.aclNamespace,
      individual(`urn:test:${randomUUID()}`),
    );
    expect(await waitFor('policygrant', fixture.aclNamespace, name, 'Ready=False')).toBe(
      'False ItemNotFound',
    );
  });

  it('is True once a membership is written', async () => {
    const membership = await fixture.resources.createMembership(fixture.aclNamespace, {
      organisationId: randomUUID(),
      userId: randomUUID(),
    });
    expect(await waitFor('membership', fixture.aclNamespace, membership.name, 'Ready')).toBe(
      'True Projected',
    );
  });
});
