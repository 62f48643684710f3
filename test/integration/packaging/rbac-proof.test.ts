import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_GROUP, GRANT_CLAIM_PLURAL } from '../../../src/api/v1alpha1/index.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { KubeTraffic } from './kube-traffic.js';
import { ACL_STEP, AclProof } from './rbac-proof-acl.js';
import { CONTROLLER_STEP, ControllerProof } from './rbac-proof-controller.js';
import { DECISION_STEP, DecisionProof } from './rbac-proof-decision.js';
import {
  permissionLabel,
  renderComponent,
  watchStepName,
  type FlowOutcome,
  type RenderedComponent,
} from './rbac-proof-flow.js';
import { EXTERNAL_SPICEDB_VALUES, renderChart, type KubeObject } from './packaging-support.js';
import { allowedVerbs, configMapCallStatuses, secretsOfDeployment } from './rbac-proof-confinement.js';
import {
  isAllowed,
  permissionsOf,
  serviceAccountKubeConfig,
  withoutPermission,
  type Permission,
} from './service-account-kubeconfig.js';

// The RBAC proof: each component runs in this process against the shared kube-apiserver as its chart
// ServiceAccount (a TokenRequest token, the chart's Roles and bindings applied) and passes its main flow; then,
// for every permission the chart grants it, the flow runs again without that one permission and must break
// at the step the table names. A permission the code never uses would leave the flow intact and fail here; so
// would a rule the chart adds without a line in the table. The service talks to the API server through a relay
// that records every answer (KubeTraffic): that is how a step sees a refused watch, and gives up at once.

/** What a component's flow needs around one run. */
interface ComponentProof {
  /** The release namespace. */
  namespace: string;
  run(traffic: KubeTraffic, rendered: RenderedComponent): Promise<FlowOutcome>;
  dispose?(): Promise<void>;
}

interface RbacProofOptions {
  component: string;
  values?: object;
  prepare(): Promise<ComponentProof>;
  /** Every step of the flow, in order. */
  steps: string[];
  /** Per permission (permissionLabel), the steps at which the flow may break without it. */
  breaks: Record<string, string[]>;
}

function proveRbac({ component, values = {}, prepare, steps, breaks }: RbacProofOptions): void {
  let proof: ComponentProof;

  beforeAll(async () => {
    proof = await prepare();
  });

  afterAll(async () => {
    await proof?.dispose?.();
  });

  /** Runs the flow as a ServiceAccount with `rbac`, first checking that `denied` is indeed not granted. */
  async function runAs(rendered: RenderedComponent, rbac: KubeObject[], denied?: Permission) {
    const session = await serviceAccountKubeConfig(testKubeConfig(), rbac);
    const traffic = await KubeTraffic.start(session.kubeConfig);
    try {
      if (denied) expect(await isAllowed(session.kubeConfig, denied), 'still granted').toBe(false);
      const outcome = await proof.run(traffic, rendered);
      if (!denied) expect(traffic.refusals(), 'calls refused with the chart RBAC').toEqual([]);
      return outcome;
    } finally {
      await traffic.stop();
      await session.dispose();
    }
  }

  it('passes every step of its flow with the chart RBAC', async () => {
    const rendered = await renderComponent(proof.namespace, component, values);
    expect(await runAs(rendered, rendered.rbac)).toEqual({ passed: steps });
  });

  it('is granted by the chart exactly the permissions proven below', async () => {
    const { rbac } = await renderComponent(proof.namespace, component, values);
    expect(permissionsOf(rbac).map(permissionLabel).sort()).toEqual(Object.keys(breaks).sort());
  });

  it.each(Object.entries(breaks))(
    'without %s, the flow breaks where the table says',
    async (label, expectedSteps) => {
      const rendered = await renderComponent(proof.namespace, component, values);
      const permission = permissionsOf(rendered.rbac).find((granted) => permissionLabel(granted) === label);
      if (!permission) throw new Error(`the chart does not grant ${label}`);
      const outcome = await runAs(rendered, withoutPermission(rendered.rbac, permission), permission);
      expect(expectedSteps, JSON.stringify(outcome.broken ?? 'nothing broke')).toContain(
        outcome.broken?.step,
      );
    },
  );
}

describe('the ACL API as its chart ServiceAccount', () => {
  proveRbac({
    component: 'acl-api',
    prepare: () => AclProof.prepare(),
    steps: [
      ACL_STEP.ready,
      ...ACL_STEP.watches,
      ACL_STEP.replicas,
      ACL_STEP.replicasWatch,
      ...ACL_STEP.catalog,
      ACL_STEP.create,
      ACL_STEP.verify,
      ACL_STEP.revoke,
      ACL_STEP.recreate,
      ACL_STEP.takeover,
      ACL_STEP.unclaimed,
      ACL_STEP.idempotent,
      ACL_STEP.conflict,
      ACL_STEP.rollback,
      ACL_STEP.unbound,
      ACL_STEP.memberAdded,
      ACL_STEP.memberRemoved,
      ACL_STEP.memberRace,
      ACL_STEP.delegate,
      ACL_STEP.delegationConflict,
      ACL_STEP.delegationRevoke,
      ACL_STEP.agentEnrol,
      ACL_STEP.agentDelete,
      ACL_STEP.accessRequest,
      ACL_STEP.accessApproval,
      ...ACL_STEP.namespaces,
    ],
    breaks: {
      // Its informers: without list a cache never fills (not ready, every request 503); without watch
      // the informer's watch is refused, and changes would arrive only with relists, late.
      'ClusterRole list acl.policygrant.dev/policygrants': [ACL_STEP.ready],
      'ClusterRole watch acl.policygrant.dev/policygrants': [watchStepName('policygrants')],
      'ClusterRole list acl.policygrant.dev/catalogitems': [ACL_STEP.ready],
      'ClusterRole watch acl.policygrant.dev/catalogitems': [watchStepName('catalogitems')],
      'ClusterRole list core/namespaces': [ACL_STEP.ready],
      'ClusterRole watch core/namespaces': [watchStepName('namespaces')],
      'Role list acl.policygrant.dev/memberships': [ACL_STEP.ready],
      'Role watch acl.policygrant.dev/memberships': [watchStepName('memberships')],
      // The decision replicas that confirm a change for Prefer: wait: the Service's EndpointSlices, followed.
      'Role list discovery.k8s.io/endpointslices': [ACL_STEP.replicas],
      'Role watch discovery.k8s.io/endpointslices': [ACL_STEP.replicas, ACL_STEP.replicasWatch],
      // Its writes in the release namespace.
      'Role create acl.policygrant.dev/policygrants': [ACL_STEP.create],
      'Role create acl.policygrant.dev/grantclaims': [ACL_STEP.create],
      'Role update acl.policygrant.dev/grantclaims': [ACL_STEP.create],
      'Role patch acl.policygrant.dev/policygrants': [ACL_STEP.revoke],
      'Role get acl.policygrant.dev/grantclaims': [ACL_STEP.revoke],
      'Role delete acl.policygrant.dev/grantclaims': [ACL_STEP.revoke],
      'Role get acl.policygrant.dev/policygrants': [ACL_STEP.takeover],
      'Role delete acl.policygrant.dev/policygrants': [ACL_STEP.rollback],
      // Membership events: create the object, replace it, and re-read it when a write meets a newer one (the
      // removal may already meet one, when the cache has not seen the create yet).
      'Role create acl.policygrant.dev/memberships': [ACL_STEP.memberAdded],
      'Role update acl.policygrant.dev/memberships': [ACL_STEP.memberRemoved, ACL_STEP.memberRace],
      // Delegations: a claim reads the agent's Agent object, then creates it (or replaces a released one), the
      // Delegation records the delegation; revocation patches revokedAt; cos_admin replaces (enrols) and deletes
      // Agents.
      'Role list acl.policygrant.dev/delegations': [ACL_STEP.ready],
      'Role watch acl.policygrant.dev/delegations': [watchStepName('delegations')],
      'Role create acl.policygrant.dev/agents': [ACL_STEP.delegate],
      'Role create acl.policygrant.dev/delegations': [ACL_STEP.delegate],
      'Role get acl.policygrant.dev/agents': [ACL_STEP.delegate],
      'Role update acl.policygrant.dev/agents': [ACL_STEP.agentEnrol],
      'Role delete acl.policygrant.dev/agents': [ACL_STEP.agentDelete],
      'Role patch acl.policygrant.dev/delegations': [ACL_STEP.delegationRevoke],
      // Access requests: created, then marked PENDING through the status; a decision reads the request as
      // the API server has it (If-Match) and writes the status.
      'Role list acl.policygrant.dev/accessrequests': [ACL_STEP.ready],
      'Role watch acl.policygrant.dev/accessrequests': [watchStepName('accessrequests')],
      'Role create acl.policygrant.dev/accessrequests': [ACL_STEP.accessRequest],
      'Role update acl.policygrant.dev/accessrequests/status': [ACL_STEP.accessRequest],
      'Role get acl.policygrant.dev/accessrequests': [ACL_STEP.accessApproval],
    },
  });
});

// It faces the internet: whoever takes it over must not reach the settings and JWKS ConfigMaps the other
// services load, any Secret, or SpiceDB.
describe('the ACL API is confined to its own resources', () => {
  it('may not get, list, create, update or delete a ConfigMap or Secret of the release namespace; only use GrantClaims', async () => {
    const namespace = await createTestNamespace('rbac-proof-confinement');
    const settings = 'pgo-policy-grant-operator-settings';
    await testKubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespacedConfigMap({ namespace, body: { metadata: { name: settings }, data: { A: 'b' } } });
    const { rbac } = await renderComponent(namespace, 'acl-api');
    const session = await serviceAccountKubeConfig(testKubeConfig(), rbac);
    try {
      const { kubeConfig } = session;
      expect(await allowedVerbs(kubeConfig, namespace, '', 'configmaps')).toEqual([]);
      expect(await allowedVerbs(kubeConfig, namespace, '', 'secrets')).toEqual([]);
      expect(await allowedVerbs(kubeConfig, namespace, API_GROUP, GRANT_CLAIM_PLURAL)).toEqual([
        'get',
        'create',
        'update',
        'delete',
      ]);
      expect(await configMapCallStatuses(kubeConfig, namespace, settings)).toEqual({
        get: 403,
        list: 403,
        create: 403,
        update: 403,
        delete: 403,
      });
      const kept = await testKubeConfig()
        .makeApiClient(CoreV1Api)
        .readNamespacedConfigMap({ name: settings, namespace });
      expect(kept.data).toEqual({ A: 'b' });
    } finally {
      await session.dispose();
    }
  });

  it("holds no SpiceDB key: no variable or volume of its Deployment comes from SpiceDB's Secrets", async () => {
    const objects = await renderChart('rbac-proof-confinement', EXTERNAL_SPICEDB_VALUES);
    const { existingSecret, tls } = EXTERNAL_SPICEDB_VALUES.spicedb;
    const acl = secretsOfDeployment(objects, 'acl-api');
    expect(acl.variables.filter((name) => name.startsWith('SPICEDB_'))).toEqual([]);
    expect(acl.secrets).not.toContain(existingSecret);
    expect(acl.secrets).not.toContain(tls.caSecret);
    // The same reading finds them where they are meant to be.
    expect(secretsOfDeployment(objects, 'controller').secrets).toEqual(
      expect.arrayContaining([existingSecret, tls.caSecret]),
    );
  });
});

describe('the grant controller as its chart ServiceAccount', () => {
  proveRbac({
    component: 'controller',
    prepare: () => ControllerProof.prepare(),
    steps: [
      CONTROLLER_STEP.leads,
      CONTROLLER_STEP.synced,
      ...CONTROLLER_STEP.watches,
      CONTROLLER_STEP.renews,
      ...CONTROLLER_STEP.catalog,
      CONTROLLER_STEP.enforce,
      CONTROLLER_STEP.member,
      CONTROLLER_STEP.delegation,
      CONTROLLER_STEP.accessRequest,
      CONTROLLER_STEP.event,
      CONTROLLER_STEP.revoke,
      CONTROLLER_STEP.delete,
      CONTROLLER_STEP.unbound,
      ...Object.values(CONTROLLER_STEP.collected),
      ...CONTROLLER_STEP.namespaces,
    ],
    breaks: {
      'ClusterRole list acl.policygrant.dev/policygrants': [CONTROLLER_STEP.synced],
      'ClusterRole watch acl.policygrant.dev/policygrants': [watchStepName('policygrants')],
      'ClusterRole list acl.policygrant.dev/catalogitems': [CONTROLLER_STEP.synced],
      'ClusterRole watch acl.policygrant.dev/catalogitems': [watchStepName('catalogitems')],
      'ClusterRole list core/namespaces': [CONTROLLER_STEP.synced],
      'ClusterRole watch core/namespaces': [watchStepName('namespaces')],
      // The finalizer is written before anything else; the status after the SpiceDB write.
      'ClusterRole patch acl.policygrant.dev/policygrants': [CONTROLLER_STEP.enforce],
      'ClusterRole update acl.policygrant.dev/policygrants/status': [CONTROLLER_STEP.enforce],
      'ClusterRole create events.k8s.io/events': [CONTROLLER_STEP.event],
      // Memberships live in the release namespace only: the controller follows and projects those.
      'Role list acl.policygrant.dev/memberships': [CONTROLLER_STEP.synced],
      'Role watch acl.policygrant.dev/memberships': [watchStepName('memberships')],
      'Role patch acl.policygrant.dev/memberships': [CONTROLLER_STEP.member],
      'Role update acl.policygrant.dev/memberships/status': [CONTROLLER_STEP.member],
      // Delegations and Agents too: a delegation counts only for the owner its Agent names.
      'Role list acl.policygrant.dev/delegations': [CONTROLLER_STEP.synced],
      'Role watch acl.policygrant.dev/delegations': [watchStepName('delegations')],
      'Role list acl.policygrant.dev/agents': [CONTROLLER_STEP.synced],
      'Role watch acl.policygrant.dev/agents': [watchStepName('agents')],
      'Role patch acl.policygrant.dev/delegations': [CONTROLLER_STEP.delegation],
      'Role update acl.policygrant.dev/delegations/status': [CONTROLLER_STEP.delegation],
      // AccessRequests: followed, and their state written (PENDING for one applied without, EXPIRED).
      'Role list acl.policygrant.dev/accessrequests': [CONTROLLER_STEP.synced],
      'Role watch acl.policygrant.dev/accessrequests': [watchStepName('accessrequests')],
      'Role update acl.policygrant.dev/accessrequests/status': [CONTROLLER_STEP.accessRequest],
      // Garbage collection: what finished goes after the retention (a second here), the unused Agent after it.
      'Role delete acl.policygrant.dev/delegations': [CONTROLLER_STEP.collected.delegation],
      'Role delete acl.policygrant.dev/agents': [CONTROLLER_STEP.collected.agent],
      'Role delete acl.policygrant.dev/memberships': [CONTROLLER_STEP.collected.membership],
      'Role delete acl.policygrant.dev/accessrequests': [CONTROLLER_STEP.collected.accessRequest],
      // Leader election: read the Lease, create it when absent, renew it.
      'Role get coordination.k8s.io/leases (own name)': [CONTROLLER_STEP.leads],
      'Role create coordination.k8s.io/leases': [CONTROLLER_STEP.leads],
      'Role update coordination.k8s.io/leases (own name)': [CONTROLLER_STEP.renews],
    },
  });
});

describe('the decision service as its chart ServiceAccount (TokenReview enabled)', () => {
  proveRbac({
    component: 'decision-service',
    values: { decisionService: { tokenReview: { enabled: true } } },
    prepare: () => DecisionProof.prepare(),
    steps: [DECISION_STEP.ready, DECISION_STEP.serviceAccountCaller],
    breaks: {
      'ClusterRole create authentication.k8s.io/tokenreviews': [DECISION_STEP.serviceAccountCaller],
    },
  });
});
