/**
 * Powertools for AWS Lambda: one Logger, one Metrics (CloudWatch EMF) and one Tracer
 * (X-Ray) per process. Locally tracing switches itself off (not a Lambda environment)
 * and the local runtime disables metric output (POWERTOOLS_METRICS_DISABLED).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { loadConfig } from '../config.js';

const settings = loadConfig().observability;
const serviceName = settings.serviceName;

export const logger = new Logger({ serviceName, logLevel: settings.logLevel as 'INFO' });
export const metrics = new Metrics({ namespace: settings.metricsNamespace, serviceName });
export const tracer = new Tracer({ serviceName });

export { MetricUnit };

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
