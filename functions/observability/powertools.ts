/**
 * Powertools for AWS Lambda: one Logger, one Metrics (CloudWatch EMF) and one Tracer
 * (X-Ray) per process. Locally tracing switches itself off (not a Lambda environment)
 * and the local runtime disables metric output (POWERTOOLS_METRICS_DISABLED).
 *
 * AWS SDK clients are traced through tracedInInvocations(): X-Ray records a call as a
 * subsegment of the invocation's trace, and outside an invocation (Lambda's init phase,
 * where the forest families load their snapshot) there is none, so no X-Ray code runs
 * for calls made there.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { loadConfig } from '../config.js';

const settings = loadConfig().observability;
const serviceName = settings.serviceName;

// sampling: a share of invocations log at DEBUG whatever the level (Powertools decides when
// the Logger is built, and for the HTTP functions again per invocation: injectLambdaContext)
export const logger = new Logger({ serviceName, logLevel: settings.logLevel as 'INFO', sampleRateValue: settings.logSampleRate });
export const metrics = new Metrics({ namespace: settings.metricsNamespace, serviceName });
// No global patch of http/https: it resolves the invocation's trace for every outgoing
// request, the init phase's DynamoDB calls included (see tracedInInvocations). AWS SDK
// clients are traced through tracedInInvocations; fetch (the Keystone authorizer's
// calls, made inside invocations only) stays traced.
export const tracer = new Tracer({ serviceName, captureHTTPsRequests: false });
if (tracer.isTracingEnabled()) tracer.provider.instrumentFetch();

export { MetricUnit };

/**
 * Whether the code runs for an invocation X-Ray traces: the runtime hands each
 * invocation its trace id, and there is none before the first one (the init phase).
 */
export function inTracedInvocation(): boolean {
  return tracer.isTracingEnabled() && tracer.getRootXrayTraceId() !== undefined;
}

/**
 * An AWS SDK client whose calls X-Ray records only inside an invocation. The X-Ray SDK
 * resolves the invocation's trace for every call an instrumented client makes; without
 * one (the init phase) it logs "Missing AWS Lambda trace data" with a stack per call
 * and records nothing. So the client is built twice: `build(trace)` once with X-Ray
 * instrumentation, once without, and the function returned picks, per call, the traced
 * client inside an invocation and the plain one outside. With tracing off (locally)
 * there is one client.
 */
export function tracedInInvocations<C>(build: (trace: <T extends object>(client: T) => T) => C): () => C {
  const plain = build((client) => client);
  if (!tracer.isTracingEnabled()) return () => plain;
  const traced = build((client) => tracer.captureAWSv3Client(client));
  return () => (inTracedInvocation() ? traced : plain);
}

/** Count an event (claims, conflicts, ...). */
export function count(name: string, n = 1): void {
  metrics.addMetric(name, MetricUnit.Count, n);
}

/** Record a duration in milliseconds (candidate latency, allocation settle time, ...). */
export function millis(name: string, ms: number): void {
  metrics.addMetric(name, MetricUnit.Milliseconds, ms);
}

/** Wrap a non-HTTP Lambda (state-machine steps, the scheduled function) so its metrics are published. */
export function withMetrics<I, O>(fn: (input: I) => Promise<O>): (input: I) => Promise<O> {
  return async (input: I) => {
    try {
      return await fn(input);
    } finally {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    }
  };
}
