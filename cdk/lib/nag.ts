/**
 * cdk-nag AwsSolutions findings Berth accepts, each with its reason. Anything not
 * acknowledged here fails `cdk synth` and the template tests.
 */
import { Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Stack } from 'aws-cdk-lib';

// Table access carries no wildcard: every grant names the table or one index (cdk/lib/permissions.ts).
export function nagAcknowledgements(_stack: Stack, _table: dynamodb.TableV2): Array<{ id: string; reason: string }> {
  return [
    {
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason: 'AWSLambdaBasicExecutionRole only lets a function write its own CloudWatch logs.',
    },
    {
      id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray tracing (PutTraceSegments, PutTelemetryRecords) has no resource-level permissions.',
    },
  ];
}

/** Routes that are public on purpose: the version document and the 404 catch-all. */
export function acknowledgePublicRoute(route: import('constructs').IConstruct): void {
  Validations.of(route).acknowledge({
    id: 'AwsSolutions::AwsSolutions-APIG4',
    reason: 'Public by design: GET / is the unauthenticated version document (as in OpenStack); $default only answers 404/405.',
  });
}

export function acknowledgeNagFindings(stack: Stack & { table: dynamodb.TableV2 }): void {
  for (const a of nagAcknowledgements(stack, stack.table)) Validations.of(stack).acknowledge(a);
}
