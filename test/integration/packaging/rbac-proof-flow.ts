import { vi } from 'vitest';
import { renderChart, type KubeObject } from './packaging-support.js';
import { rbacOf, type Permission } from './service-account-kubeconfig.js';
import { uniqueId } from '../support/cluster.js';

// The RBAC proof runs a component's main flow as its chart ServiceAccount, once with the chart's RBAC (every
// step passes) and once per permission taken away (some step must break). A flow is a list of named steps; the
// first one that fails is where the flow broke.
//
// Why a missing `watch` breaks a flow at all: without it the project's informers still list, and relist after
// each refused watch with client-go's backoff (gaps of 0.8–1.6 s, then 1.6–3.2 s, then 3.2–6.4 s, ...), so a
// change does arrive, late. A step that waits for the service to notice a change gets PROMPT_MS, and each
// informer's changes are exercised by three such steps in a row. Without the watch a step passes only when a
// relist falls into its window, and it ends right after that relist; three passing steps would need three
// relists, each at most PROMPT_MS (plus the little time between steps) after the one before, while the backoff
// puts the second of those gaps at 3.2 s or more. So with PROMPT_MS at 2 s one of the three breaks, whenever
// the flow starts. With the watch, a change arrives in milliseconds.

/** How long a step may wait for the service to notice a change (a watch event, seen in milliseconds). */
export const PROMPT_MS = 2_000;
/** How long a service may take to become ready, lead and sync after it started. */
export const START_MS = 5_000;
/** Any step that takes longer than this (a call that hangs) counts as broken. */
const STEP_LIMIT_MS = 10_000;

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

/** Retries `check` until it passes (returns without throwing), for at most `timeout` ms. */
export function promptly<T>(check: () => T | Promise<T>, timeout = PROMPT_MS): Promise<T> {
  return vi.waitFor(check, { timeout, interval: 50 });
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
  const objects = await renderChart(namespace, values, uniqueId('proof'));
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
