import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { setTracingOn } from './tracing.js';

/** How the SDK samples: OTEL_TRACES_SAMPLER's names, with the ratio of the ratio-based ones. */
export type SamplerSetting =
  | { kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { kind: 'traceidratio' | 'parentbased_traceidratio'; ratio: number };

export interface TracingOptions {
  /** service.name unless OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) names another. */
  serviceName: string;
  sampler: SamplerSetting;
  /**
   * Where finished spans go, one at a time (tests: the SDK's InMemorySpanExporter). Default: OTLP over
   * HTTP/protobuf, configured by the OTEL_EXPORTER_OTLP_* variables, in batches.
   */
  exporter?: SpanExporter;
}

export interface RunningTracing {
  /** Exports what is buffered. */
  forceFlush(): Promise<void>;
  /** Exports what is buffered, then unregisters the provider: tracing is off again. */
  shutdown(): Promise<void>;
}

/**
 * Registers one TracerProvider for the process, with the AsyncLocalStorage context manager and the W3C
 * trace-context propagator, and turns the project's span hooks on. One per process: the all-in-one
 * development stack runs its three services under one provider (they tell apart by span names).
 */
export function startTracing(options: TracingOptions): RunningTracing {
  const provider = new TracerProvider({
    resource: defaultResource()
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }))
      .merge(detectResources({ detectors: [envDetector] })),
    sampler: samplerOf(options.sampler),
    spanProcessors: [
      options.exporter
        ? new SimpleSpanProcessor({ exporter: options.exporter })
        : new BatchSpanProcessor({ exporter: new OTLPTraceExporter() }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  if (!trace.setGlobalTracerProvider(provider)) throw new Error('tracing is already started in this process');
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  setTracingOn(true);
  return {
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      setTracingOn(false);
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

export function samplerOf(setting: SamplerSetting): Sampler {
  switch (setting.kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(setting.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(setting.ratio) });
  }
}
