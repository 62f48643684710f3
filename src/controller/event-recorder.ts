import { randomBytes } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../observability/logger.js';
import { collectionPath, EVENT_RESOURCE, isConflict, microTime, type KubeClient } from '../kube/index.js';

export const REPORTING_CONTROLLER = 'acl.policygrant.dev/policy-grant-controller';

export interface RecordedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  /** What the controller did: `Project`, `Withdraw`, or `Decide` (an access request's decision). */
  action: string;
  note: string;
  /**
   * A name suffix of its own instead of a unique one: an Event recorded under it is recorded once (while the
   * apiserver keeps it), however many replicas or restarts record it.
   */
  once?: string;
}

/** events.k8s.io/v1 caps `note` at 1 KiB. */
const MAX_NOTE_LENGTH = 1_024;
const EVENT_TIMEOUT_MS = 5_000;

function uniqueSuffix(): string {
  return `${Date.now().toString(16)}${randomBytes(4).toString('hex')}`;
}

/**
 * Writes events.k8s.io/v1 Events about an object (shown by `kubectl describe` and `kubectl events`). An
 * event that cannot be written is logged and dropped: events are a courtesy, never a reason to retry work.
 */
export class EventRecorder {
  constructor(
    private readonly kube: KubeClient,
    private readonly reportingInstance: string,
    private readonly logger: Logger,
  ) {}

  async record(regarding: KubernetesObject, event: RecordedEvent): Promise<void> {
    const { namespace = 'default', name = '', uid, resourceVersion } = regarding.metadata ?? {};
    const note =
      event.note.length > MAX_NOTE_LENGTH ? `${event.note.slice(0, MAX_NOTE_LENGTH - 1)}…` : event.note;
    const body = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      // client-go's naming: <object>.<unique hex>; generateName cannot end in a dot.
      metadata: { name: `${name}.${event.once ?? uniqueSuffix()}`, namespace },
      eventTime: microTime(new Date()),
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: this.reportingInstance.slice(0, 128),
      action: event.action,
      reason: event.reason,
      note,
      type: event.type,
      regarding: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        namespace,
        name,
        uid,
        resourceVersion,
      },
    };
    try {
      await this.kube.call({
        method: 'POST',
        path: collectionPath(EVENT_RESOURCE, namespace),
        body,
        timeoutMs: EVENT_TIMEOUT_MS,
      });
    } catch (err) {
      if (event.once !== undefined && isConflict(err)) return;
      this.logger.warn(
        { err, object: `${namespace}/${name}`, reason: event.reason },
        'could not record event',
      );
    }
  }
}
