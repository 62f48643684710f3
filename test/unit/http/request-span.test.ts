import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import type { SamplerSetting } from '../../../src/observability/tracing-sdk.js';
import { startTracing, type RunningTracing } from '../../../src/observability/tracing-sdk.js';
import { capturedLogger, serve } from './support/serve.js';
import { sampleApp } from './support/sample-api.js';

// The caller's traceparent is untrusted (W3C Trace Context, OpenTelemetry's sampler semantics): an
// unauthenticated request chooses neither whether it is exported nor the trace id of our spans and log lines.

const CALLERS_TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLERS_SPAN_ID = 'b7ad6b7169203331';
const SAMPLED_PARENT = `00-${CALLERS_TRACE_ID}-${CALLERS_SPAN_ID}-01`;

let tracing: RunningTracing | undefined;
afterEach(() => tracing?.shutdown());

/** The sample API under `sampler`; `get` sends an unauthenticated listing and waits until its span ended. */
async function start(sampler: SamplerSetting) {
  const exporter = new InMemorySpanExporter();
  tracing = startTracing({ serviceName: 'unit', sampler, exporter });
  const logs = capturedLogger();
  const base = await serve(sampleApp({ logger: logs.logger }).app);
  const get = async (headers: Record<string, string>) => {
    const response = await fetch(`${base}/v2/policy/platform`, { headers });
    expect(response.status).toBe(401);
    // The access log line is written when the request closes, after its span ended.
    const line = await logs.line('request');
    await tracing?.forceFlush();
    return line;
  };
  return { exporter, get, logs };
}

describe('the server span of a request with a traceparent', () => {
  it('is not exported at a sampling ratio of 0, although the caller’s parent says sampled', async () => {
    const { exporter, get } = await start({ kind: 'parentbased_traceidratio', ratio: 0 });
    await get({ traceparent: SAMPLED_PARENT });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('starts a trace of ours, keeps the caller’s span as a link only, and logs our trace id', async () => {
    const { exporter, get, logs } = await start({ kind: 'always_on' });
    const line = await get({ traceparent: SAMPLED_PARENT, tracestate: 'vendor=chosen' });
    const [server] = exporter.getFinishedSpans();
    expect(server?.kind).toBe(SpanKind.SERVER);
    expect(server?.parentSpanContext).toBeUndefined();
    const ours = server?.spanContext().traceId;
    expect(ours).not.toBe(CALLERS_TRACE_ID);
    expect(server?.spanContext().traceState).toBeUndefined();
    expect(server?.links.map((link) => link.context)).toEqual([
      expect.objectContaining({ traceId: CALLERS_TRACE_ID, spanId: CALLERS_SPAN_ID }),
    ]);
    expect(line.trace_id).toBe(ours);
    expect(logs.text()).not.toContain(CALLERS_TRACE_ID);
  });

  it('links to nothing for a malformed traceparent', async () => {
    const { exporter, get } = await start({ kind: 'always_on' });
    await get({ traceparent: `00-${'0'.repeat(32)}-${CALLERS_SPAN_ID}-01` });
    expect(exporter.getFinishedSpans()[0]?.links).toEqual([]);
  });
});
