import type { KubeConfig } from '@kubernetes/client-node';
import { listObjects } from './cluster-objects.js';
import { MEMBERSHIP_RESOURCE, type Membership, type MembershipKey } from '../../../src/api/v1alpha1/index.js';
import { memberEvent, STRUCTURED_EVENT } from '../../support/member-events.js';

/** One membership change as a producer reports it. */
export interface MembershipChange {
  kind: 'added' | 'removed';
  key: MembershipKey;
  at: Date;
}

/** Applies one change; the one place that decides how changes reach the cluster. */
export type MembershipWriter = (change: MembershipChange) => Promise<void>;

/**
 * Sends each change as a CloudEvent to the ACL API's POST /events, as a membership producer does; the event's
 * time is when the change happened. Anything but an applied event fails the stream.
 */
export function eventMembershipWriter(aclUrl: string, authorization: string): MembershipWriter {
  return async ({ kind, key, at }) => {
    const response = await fetch(`${aclUrl}/events`, {
      method: 'POST',
      headers: { authorization, 'content-type': STRUCTURED_EVENT },
      body: JSON.stringify(memberEvent(kind, key, at.toISOString())),
    });
    const body = (await response.json()) as { results?: { outcome: string }[]; detail?: string };
    const outcome = body.results?.[0]?.outcome;
    if (response.status !== 200 || outcome !== 'applied') {
      throw new Error(`POST /events: ${response.status} ${outcome ?? body.detail ?? ''}`);
    }
  };
}

/** Every Membership of the namespace, read from the kube-apiserver itself. */
export function listMemberships(kubeConfig: KubeConfig, namespace: string): Promise<Membership[]> {
  return listObjects(kubeConfig, MEMBERSHIP_RESOURCE, { namespace });
}
