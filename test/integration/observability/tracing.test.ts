import { randomUUID } from 'node:crypto';
import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectPath } from '../../../src/kube/paths.js';
import { POLICY_GRANT_RESOURCE } from '../../../src/api/v1alpha1/index.js';
import { inSpan, TRACEPARENT_ANNOTATION } from '../../../src/observability/tracing.js';
import { startTracing, type RunningTracing } from '../../../src/observability/tracing-sdk.js';
import { AclHarness, individual } from '../acl/support/acl-harness.js';
import { SCOPE_LABEL, useControllerFixture } from '../controller/support/harness.js';
import { startServiceUnderTest, untilReady } from '../decision/support/decision-service.js';
import { capturedLogger } from '../../unit/http/support/serve.js';

// One trace from the REST call to SpiceDB, with the SDK's in-memory exporter: real kube-apiserver, SpiceDB,
// controller, ACL API and decision service in this process, under one TracerProvider (as the all-in-one
// development stack runs them).

const exporter = new InMemorySpanExporter();
let tracing: RunningTracing;
// Registered before the fixture's hooks, so that the controller starts with tracing on.
beforeAll(() => {
  tracing = startTracing({ serviceName: 'tracing-test', sampler: { kind: 'always_on' }, exporter });
});
afterAll(() => tracing.shutdown());

const fixture = useControllerFixture('tracing');
const acl = new AclHarness();
beforeAll(() => acl.start('tracing', { namespace: fixture.aclNamespace }));
afterAll(() => acl.stop());

const spans = () => exporter.getFinishedSpans();
const traceIdOf = (span: ReadableSpan) => span.spanContext().traceId;
const isChildOf = (child: ReadableSpan, parent: ReadableSpan) =>
  traceIdOf(child) === traceIdOf(parent) && child.parentSpanContext?.spanId === parent.spanContext().spanId;

function findSpan(predicate: (span: ReadableSpan) => boolean): ReadableSpan | undefined {
  return spans().find(predicate);
}

/** Waits for a span; a failure lists the spans there are, with their trace ids, parents and links. */
async function spanThat(what: string, predicate: (span: ReadableSpan) => boolean): Promise<ReadableSpan> {
  await expect
    .poll(() => findSpan(predicate) !== undefined)
    .toBe(true)
    .catch((error: unknown) => {
      throw new Error(`${what}: none among\n${spans().map(describeSpan).join('\n')}`, { cause: error });
    });
  return findSpan(predicate) as ReadableSpan;
}

function describeSpan(span: ReadableSpan): string {
  const links = span.links.map((link) => link.context.traceId).join(',');
  return `${traceIdOf(span)} ${span.spanContext().spanId} <- ${span.parentSpanContext?.spanId ?? 'root'} ${span.name} links:${links}`;
}

describe('a create through the ACL API', () => {
  it('is one connected trace: server span → Kubernetes create → (link) reconcile → SpiceDB write', async () => {
    const owner = await acl.user();
    const item = await fixture.resources.createItem({ ownerId: owner.id, organisationId: randomUUID() });
    const answer = await acl.request<{ results: { policyId: string }[] }>('POST', '/policy', {
      caller: owner,
      body: { request: [individual(item.spec.itemId, randomUUID())] },
    });
    expect(answer.status).toBe(201);
    const grant = (await acl.listGrants()).find(
      (each) => each.metadata.uid === answer.body.results[0]?.policyId,
    );
    const name = grant?.metadata.name as string;

    const server = await spanThat('the server span of the create', (span) => span.name === 'POST /v2/policy');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v2/policy',
      'http.response.status_code': 201,
    });
    expect(server.attributes['policygrant.request_id']).toEqual(expect.any(String));
    const create = findSpan((span) => span.name === 'create policygrants' && isChildOf(span, server));
    expect(create?.attributes).toMatchObject({
      'k8s.request.verb': 'create',
      'k8s.request.resource': 'policygrants',
      'k8s.namespace.name': fixture.aclNamespace,
    });
    expect(grant?.metadata.annotations?.[TRACEPARENT_ANNOTATION]).toContain(traceIdOf(server));

    // The controller of this file watches its scope only: the label brings the grant into it, as kubectl would.
    await acl.kube.call({
      method: 'PATCH',
      path: objectPath(POLICY_GRANT_RESOURCE, { namespace: fixture.aclNamespace, name }),
      body: { metadata: { labels: { [SCOPE_LABEL]: fixture.resources.scope } } },
    });
    const linkedToCreate = (span: ReadableSpan) =>
      span.links.some((link) => link.context.traceId === traceIdOf(server));
    const write = await spanThat('the SpiceDB write of a reconcile linked to the create', (span) => {
      const reconcile = spans().find((each) => each.name === 'reconcile policygrant' && linkedToCreate(each));
      return (
        reconcile !== undefined &&
        span.name === 'authzed.api.v1.PermissionsService/WriteRelationships' &&
        traceIdOf(span) === traceIdOf(reconcile)
      );
    });
    expect(write.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.method': 'WriteRelationships' });
  });
});

describe('a check with a traceparent', () => {
  const traceId = randomUUID().replaceAll('-', '');
  const parentSpanId = randomUUID().replaceAll('-', '').slice(0, 16);
  const traceparent = `00-${traceId}-${parentSpanId}-01`;

  it('gives a server span of our own trace linked to the caller’s, and a SpiceDB span inside it', async () => {
    const service = await startServiceUnderTest({ spicedb: fixture.spicedb.server });
    try {
      await untilReady(service);
      const check = {
        subject_type: 'user',
        subject_id: randomUUID(),
        resource_type: 'resource',
        resource_id: randomUUID(),
        relation: 'api',
      };
      expect((await service.check(check, { authorization: service.authorization, traceparent })).status).toBe(
        200,
      );
      const server = await spanThat(
        'the check’s server span',
        (span) => span.kind === SpanKind.SERVER && span.links[0]?.context.traceId === traceId,
      );
      expect(server.name).toBe('POST /v1/check');
      expect(server.parentSpanContext).toBeUndefined();
      expect(server.links[0]?.context.spanId).toBe(parentSpanId);
      const spicedb = await spanThat('the check’s SpiceDB span', (span) => isChildOf(span, server));
      expect(spicedb.name).toBe('authzed.api.v1.PermissionsService/CheckPermission');

      // A request no route answers is logged (at info) inside its span: the line carries our trace id.
      const unknown = await service.post(
        '/v1/unknown',
        {},
        { authorization: service.authorization, traceparent },
      );
      expect(unknown.status).toBe(404);
      const unmatched = await spanThat(
        'the unknown route’s server span',
        (span) => span.name === 'POST' && span.links[0]?.context.traceId === traceId,
      );
      await expect.poll(() => service.logs()).toContain(`"trace_id":"${traceIdOf(unmatched)}"`);
      expect(service.logs()).not.toContain(traceId);
    } finally {
      await service.stop();
    }
  });
});

describe('log lines', () => {
  it('written inside a span carry its trace_id and span_id', async () => {
    const { logger, lines } = capturedLogger();
    let ids = { traceId: '', spanId: '' };
    await inSpan(
      () => ({ name: 'logging' }),
      async () => {
        ids = trace.getActiveSpan()?.spanContext() ?? ids;
        logger.info('inside');
      },
    );
    logger.info('outside');
    const [inside, outside] = lines();
    expect(inside).toMatchObject({ msg: 'inside', trace_id: ids.traceId, span_id: ids.spanId });
    expect(outside).not.toHaveProperty('trace_id');
  });
});
