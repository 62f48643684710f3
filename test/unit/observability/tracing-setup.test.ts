import { ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTracingFromEnvironment } from '../../../src/cmd/tracing-setup.js';
import { samplerOf, type SamplerSetting } from '../../../src/observability/tracing-sdk.js';
import { tracingOn } from '../../../src/observability/tracing.js';

/** An OTLP/HTTP receiver on loopback that records the requests it gets and answers 200. */
async function otlpReceiver() {
  const received: { path: string | undefined; contentType: string | undefined; bytes: number }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      received.push({ path: req.url, contentType: req.headers['content-type'], bytes });
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    received,
    endpoint: `http://127.0.0.1:${port}/v1/traces`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('startTracingFromEnvironment', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('starts nothing when no OTEL_* variable turns tracing on', async () => {
    expect(await startTracingFromEnvironment('unit', {})).toBeUndefined();
    expect(tracingOn()).toBe(false);
  });

  it('exports spans over OTLP/HTTP protobuf to the configured endpoint when turned on', async () => {
    const receiver = await otlpReceiver();
    try {
      // The exporter reads its endpoint from the process's environment, as the SDK documents.
      vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', receiver.endpoint);
      const tracing = await startTracingFromEnvironment('unit', { OTEL_TRACES_EXPORTER: 'otlp' });
      expect(tracing).toBeDefined();
      expect(tracingOn()).toBe(true);
      trace.getTracer('unit').startSpan('exported').end();
      await tracing?.forceFlush();
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]).toMatchObject({
        path: '/v1/traces',
        contentType: 'application/x-protobuf',
      });
      expect(receiver.received[0]?.bytes).toBeGreaterThan(0);
      await tracing?.shutdown();
      expect(tracingOn()).toBe(false);
    } finally {
      await receiver.close();
    }
  });
});

describe('samplerOf', () => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const decisionOf = (setting: SamplerSetting) =>
    samplerOf(setting).shouldSample(ROOT_CONTEXT, traceId, 'root', SpanKind.SERVER, {}, []).decision;

  it.each<[SamplerSetting, SamplingDecision]>([
    [{ kind: 'always_on' }, SamplingDecision.RECORD_AND_SAMPLED],
    [{ kind: 'always_off' }, SamplingDecision.NOT_RECORD],
    [{ kind: 'traceidratio', ratio: 1 }, SamplingDecision.RECORD_AND_SAMPLED],
    [{ kind: 'traceidratio', ratio: 0 }, SamplingDecision.NOT_RECORD],
    [{ kind: 'parentbased_always_on' }, SamplingDecision.RECORD_AND_SAMPLED],
    [{ kind: 'parentbased_always_off' }, SamplingDecision.NOT_RECORD],
    [{ kind: 'parentbased_traceidratio', ratio: 1 }, SamplingDecision.RECORD_AND_SAMPLED],
    [{ kind: 'parentbased_traceidratio', ratio: 0 }, SamplingDecision.NOT_RECORD],
  ])('samples a root span by %o as %s', (setting, decision) => {
    expect(decisionOf(setting)).toBe(decision);
  });
});
