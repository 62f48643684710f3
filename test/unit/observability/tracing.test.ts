import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  activeContextIfTracing,
  inSpan,
  linksToTraceparent,
  NO_TRACE_FIELDS,
  onBehalfOf,
  traceFields,
  tracingOn,
  withTraceparent,
  TRACEPARENT_ANNOTATION,
} from '../../../src/observability/tracing.js';
import { startTracing, type RunningTracing } from '../../../src/observability/tracing-sdk.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('tracing off (the default)', () => {
  it('starts no span, adds no annotation and no log field', async () => {
    expect(tracingOn()).toBe(false);
    let describeCalled = false;
    const answer = await inSpan(
      () => {
        describeCalled = true;
        return { name: 'never' };
      },
      async () => trace.getActiveSpan(),
    );
    expect(answer).toBeUndefined();
    expect(describeCalled).toBe(false);
    expect(withTraceparent({ a: 'b' })).toEqual({ a: 'b' });
    expect(traceFields()).toBe(NO_TRACE_FIELDS);
    expect(activeContextIfTracing()).toBeUndefined();
  });
});

describe('tracing on', () => {
  // A provider's shutdown stops its exporter: each test has its own.
  let exporter: InMemorySpanExporter;
  let tracing: RunningTracing | undefined;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
  });
  afterEach(() => tracing?.shutdown());
  const start = () =>
    (tracing = startTracing({ serviceName: 'unit', sampler: { kind: 'always_on' }, exporter }));

  it('refuses a second provider in the process', () => {
    start();
    expect(() => startTracing({ serviceName: 'again', sampler: { kind: 'always_on' }, exporter })).toThrow(
      /already started/,
    );
  });

  it('marks a failed span as an error and rethrows', async () => {
    start();
    await expect(
      inSpan(
        () => ({ name: 'failing' }),
        () => Promise.reject(new Error('boom')),
      ),
    ).rejects.toThrow('boom');
    expect(exporter.getFinishedSpans()[0]?.status).toMatchObject({ code: 2, message: 'boom' });
  });

  it('records a thrown value that is not an Error by its text', async () => {
    start();
    await expect(
      inSpan(
        () => ({ name: 'failing' }),
        () => Promise.reject('refused'),
      ),
    ).rejects.toBe('refused');
    const [span] = exporter.getFinishedSpans();
    expect(span?.status).toMatchObject({ code: 2, message: 'refused' });
    expect(span?.events[0]?.attributes?.['exception.message']).toBe('refused');
  });

  it('stamps the active traceparent, and links to a valid one only', async () => {
    start();
    await inSpan(
      () => ({ name: 'writer' }),
      async () => {
        const { traceId } = trace.getActiveSpan()?.spanContext() ?? { traceId: '' };
        expect(withTraceparent({})[TRACEPARENT_ANNOTATION]).toContain(traceId);
      },
    );
    expect(linksToTraceparent(TRACEPARENT)[0]?.context.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(linksToTraceparent('00-garbage')).toEqual([]);
    expect(linksToTraceparent(undefined)).toEqual([]);
  });

  it('runs work for several callers in a new trace linked to each, for one in its own', async () => {
    start();
    const callers = await Promise.all(
      ['a', 'b'].map((name) =>
        inSpan(
          () => ({ name }),
          async () => activeContextIfTracing(),
        ),
      ),
    );
    // A caller that was outside any trace adds no link.
    await onBehalfOf([...callers, undefined], () =>
      inSpan(
        () => ({ name: 'shared' }),
        async () => undefined,
      ),
    );
    await onBehalfOf([callers[0]], () =>
      inSpan(
        () => ({ name: 'alone' }),
        async () => undefined,
      ),
    );
    const spans = exporter.getFinishedSpans();
    const named = (name: string) => spans.find((span) => span.name === name);
    const shared = named('shared');
    expect(shared?.parentSpanContext).toBeUndefined();
    expect(shared?.links.map((link) => link.context.spanId)).toEqual([
      named('a')?.spanContext().spanId,
      named('b')?.spanContext().spanId,
    ]);
    expect(named('alone')?.parentSpanContext?.spanId).toBe(named('a')?.spanContext().spanId);
  });
});
