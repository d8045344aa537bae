/**
 * The operator's settings of Operations (cdk/lib/operations.ts): where the alarms notify
 * (`-c alarmEmail`, `-c alarmTopicArn`, `-c alarms=off`), the dashboard (`-c dashboard`)
 * and DynamoDB Contributor Insights (`-c insights`), checked before anything is built.
 */
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';

export type InsightsMode = 'all' | 'throttled';

export interface OperationsOptions {
  /** e-mail addresses subscribed to a new SNS topic the alarms notify (`-c alarmEmail=a@x,b@y`) */
  alarmEmails: string[];
  /** an existing standard SNS topic, in the stack's account and region, the alarms notify (`-c alarmTopicArn=…`) */
  alarmTopicArn?: string;
  /** a CloudWatch dashboard of the stack (`-c dashboard=true`; flat $3 a month beyond the free three) */
  dashboard: boolean;
  /**
   * DynamoDB Contributor Insights on the table and every index (`-c insights=true`: the
   * most accessed and most throttled keys; `-c insights=throttled`: throttled keys only).
   * Billed per event it counts, so it grows with traffic, unlike the dashboard.
   */
  insights: InsightsMode | false;
  /**
   * false (`-c alarms=off`): build no alarms. With alarms and no destination (neither
   * alarmEmail nor alarmTopicArn) the synth warns that they notify nobody.
   */
  alarms: boolean;
}

/** the warning of a deployment whose alarms notify nobody (cdk synth / deploy print it) */
export const NO_ALARM_DESTINATION_WARNING =
  'The alarms notify nobody: add -c alarmEmail=ops@example.com or -c alarmTopicArn=arn:aws:sns:…, or -c alarms=off to deploy without alarms knowingly (docs/operating.md, "Operating in AWS").';

export class OperationsConfigError extends Error {}

const EMAIL = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/;
// a standard topic: CloudWatch alarms cannot notify FIFO topics
const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z]{2}(-[a-z]+)+-\d:\d{12}:[A-Za-z0-9_-]{1,256}$/;

/** `-c insights=…`: true (all keys), throttled, or false / unset */
export function parseInsights(value: string | undefined): InsightsMode | false {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return 'all';
  if (value === 'throttled') return 'throttled';
  throw new OperationsConfigError(`-c insights=${value}: expected true, throttled or false`);
}

/** Check the operator's settings; unset ones take their defaults (no notification, no dashboard, no insights). */
export function validateOperations(o: Partial<OperationsOptions> = {}): OperationsOptions {
  const alarmEmails = o.alarmEmails ?? [];
  for (const e of alarmEmails) if (!EMAIL.test(e)) throw new OperationsConfigError(`alarmEmail ${JSON.stringify(e)} is not an e-mail address`);
  if (o.alarmTopicArn !== undefined && !TOPIC_ARN.test(o.alarmTopicArn)) {
    throw new OperationsConfigError(`alarmTopicArn ${JSON.stringify(o.alarmTopicArn)} is not the ARN of a standard SNS topic`);
  }
  const alarms = o.alarms ?? true;
  if (!alarms && (alarmEmails.length || o.alarmTopicArn !== undefined))
    throw new OperationsConfigError('-c alarms=off builds no alarms: leave out alarmEmail and alarmTopicArn, or drop alarms=off');
  const insights = o.insights ?? false;
  if (insights !== false && insights !== 'all' && insights !== 'throttled')
    throw new OperationsConfigError(`insights ${JSON.stringify(insights)} is not all, throttled or false`);
  // the keys Contributor Insights finds are read next to the traffic on the dashboard
  return { alarmEmails, alarmTopicArn: o.alarmTopicArn, insights, dashboard: (o.dashboard ?? false) || insights !== false, alarms };
}

/** The table's Contributor Insights setting (applies to its indexes too) for `insights`. */
export function contributorInsights(insights: InsightsMode | false): dynamodb.ContributorInsightsSpecification | undefined {
  if (insights === false) return undefined;
  return {
    enabled: true,
    mode: insights === 'throttled' ? dynamodb.ContributorInsightsMode.THROTTLED_KEYS : dynamodb.ContributorInsightsMode.ACCESSED_AND_THROTTLED_KEYS,
  };
}
