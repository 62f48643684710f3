import { expect } from 'vitest';
import { renderChart, REQUIRED_VALUES, type KubeObject } from './packaging-support.js';
import type { KubeCall, KubeTraffic } from './kube-traffic.js';
import { rbacOf, type Permission } from './service-account-kubeconfig.js';
import { uniqueId } from '../support/cluster.js';
import { POLL_TIMEOUT_MS, until } from '../../../dev/wait/until.js';

// The RBAC proof runs a component's main flow as its chart ServiceAccount, once with the chart's RBAC (every
// step passes) and once per permission taken away (some step must break). A flow is a list of named steps; the
// first one that fails is where the flow broke.
//
// Nothing in it is timed: the service's calls to the API server go through a relay (KubeTraffic) that records
// each answer. A missing `watch` would only make changes late (the informers relist after each refused watch),
// so the flow shows the watches themselves: a step per informer passes when its first watch is answered 200.
// Steps wait with the suite's poll timeout for what must happen, and give up at once when the relay shows the
// service was refused (403) what the step needs, so that a run without a permission does not wait it out.

/** Any step that takes longer than this counts as broken: a call that hangs. */
const STEP_LIMIT_MS = 2 * POLL_TIMEOUT_MS;

/** What the project's informers list and watch, in both the ACL API and the controller. */
const SHARED_INFORMER_RESOURCES = [
  'policygrants',
  'catalogitems',
  'namespaces',
  'memberships',
  'delegations',
  'accessrequests',
];
/** What only the controller's informers list and watch (the ACL API reads Agents one at a time). */
const CONTROLLER_INFORMER_RESOURCES = [...SHARED_INFORMER_RESOURCES, 'agents'];
const INFORMER_RESOURCES = CONTROLLER_INFORMER_RESOURCES;

export interface Step {
  name: string;
  run(): Promise<void>;
}

export interface FlowOutcome {
  /** The steps that passed, in order. */
  passed: string[];
  /** The first step that failed, and why; absent when every step passed. */
  broken?: { step: string; reason: string };
}

/** Runs the steps in order and stops at the first that fails. */
export async function runSteps(steps: Step[]): Promise<FlowOutcome> {
  const passed: string[] = [];
  for (const step of steps) {
    try {
      await withinLimit(step);
      passed.push(step.name);
    } catch (error) {
      return { passed, broken: { step: step.name, reason: firstLine(error) } };
    }
  }
  return { passed };
}

async function withinLimit(step: Step): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no end within ${STEP_LIMIT_MS} ms`)), STEP_LIMIT_MS);
  });
  try {
    await Promise.race([step.run(), limit]);
  } finally {
    clearTimeout(timer);
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}

export interface PromptlyOptions {
  timeout?: number;
  /** Calls whose refusal dooms the wait: it fails at once, naming the call, instead of at the timeout. */
  unlessRefused?: { traffic: KubeTraffic; calls: (call: KubeCall) => boolean };
}

/** Retries `check` until it passes (returns without throwing), for at most `timeout` ms (by default the poll timeout); the last failure when it never does. */
export async function promptly<T>(check: () => T | Promise<T>, options: PromptlyOptions = {}): Promise<T> {
  let passed: { value: T } | undefined;
  let lastFailure: unknown;
  const passes = async () => {
    try {
      passed = { value: await check() };
      return true;
    } catch (error) {
      const [refused] = options.unlessRefused?.traffic.refusals(options.unlessRefused.calls) ?? [];
      if (refused) throw new Error(`refused: ${describeCall(refused)}`);
      lastFailure = error;
      return false;
    }
  };
  await until(passes, () => lastFailure as Error, options.timeout ?? POLL_TIMEOUT_MS, 50);
  return (passed as { value: T }).value;
}

function describeCall(call: KubeCall): string {
  return `${call.method} ${call.resource}${call.watch ? ' (watch)' : ''}: ${call.status}`;
}

/** A list by one of the informers (a GET that is no watch). */
export const informerList = (call: KubeCall) =>
  call.method === 'GET' && !call.watch && INFORMER_RESOURCES.includes(call.resource);

export const watchStepName = (resource: string) => `watches ${resource}`;

/** The names of the watch steps, one per informer: of both services, and of the controller. */
export const WATCH_STEPS = SHARED_INFORMER_RESOURCES.map(watchStepName);
export const CONTROLLER_WATCH_STEPS = CONTROLLER_INFORMER_RESOURCES.map(watchStepName);

/** A step per informer showing that the service follows its resource by watch. */
export function watchSteps(traffic: KubeTraffic, resources = SHARED_INFORMER_RESOURCES): Step[] {
  return resources.map((resource) => watchStep(traffic, resource));
}

/** The controller's watch steps. */
export function controllerWatchSteps(traffic: KubeTraffic): Step[] {
  return watchSteps(traffic, CONTROLLER_INFORMER_RESOURCES);
}

/** The step that shows the service follows `resource` by watch: its first watch of it is answered 200. */
function watchStep(traffic: KubeTraffic, resource: string): Step {
  const isWatch = (call: KubeCall) => call.watch && call.resource === resource;
  return {
    name: watchStepName(resource),
    run: async () => {
      await until(() => traffic.calls.some(isWatch), `a watch of ${resource}`);
      const watch = traffic.calls.find(isWatch) as KubeCall;
      expect(watch.status, describeCall(watch)).toBe(200);
    },
  };
}

/** A permission as the proof's tables name it, e.g. `ClusterRole watch acl.policygrant.dev/policygrants`. */
export function permissionLabel(permission: Permission): string {
  const group = permission.apiGroup === '' ? 'core' : permission.apiGroup;
  const named = permission.resourceName === undefined ? '' : ' (own name)';
  return `${permission.kind} ${permission.verb} ${group}/${permission.resource}${named}`;
}

export interface RenderedComponent {
  rbac: KubeObject[];
  /** The literal environment variables of the component's Deployment. */
  env: Record<string, string>;
}

/**
 * The component's RBAC and Deployment environment, rendered for `namespace` under a release name of its own:
 * ClusterRoles are cluster-wide, and a role that reappears under an old name could still be cached by the
 * authorizer with its old rules.
 */
export async function renderComponent(
  namespace: string,
  component: string,
  values: object = {},
): Promise<RenderedComponent> {
  const objects = await renderChart(namespace, { ...REQUIRED_VALUES, ...values }, uniqueId('proof'));
  const deployment = objects.find(
    (object) =>
      object.kind === 'Deployment' && object.metadata.labels?.['app.kubernetes.io/component'] === component,
  );
  const containers = (deployment?.spec as { template: { spec: { containers: Container[] } } } | undefined)
    ?.template.spec.containers;
  const env = Object.fromEntries(
    (containers?.[0]?.env ?? []).flatMap((variable) =>
      variable.value === undefined ? [] : [[variable.name, variable.value]],
    ),
  );
  return { rbac: rbacOf(objects, component), env };
}

interface Container {
  env?: { name: string; value?: string }[];
}
