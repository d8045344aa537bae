/**
 * The scheduled maintenance of the stack: the function (orphan recovery, the
 * incomplete-consumer migration, the forest image), its schedule every minute, and the
 * queue where the runs that failed or never started leave their event for the operator
 * (docs/operating.md, "Operating in AWS"). Built in the stack's own scope
 * (cdk/lib/berth-stack.ts), so its resources keep their logical ids.
 */
import { Duration, Validations, type Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as lambdaDestinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { BaremetalApi } from './baremetal.js';
import { BerthFunction } from './function.js';
import { MAINTENANCE_ACCESS, grantTableAccess } from './permissions.js';

export interface MaintenanceProps {
  table: dynamodb.TableV2;
  /** the bare-metal API, whose state machines orphan recovery resumes */
  baremetal: BaremetalApi;
  /** the function keeps a forest too (the forest image is written from it) */
  forestMemoryMb: number;
}

export interface Maintenance {
  fn: lambda.Function;
  /** where the maintenance runs that failed (or never started) leave their event */
  failures: sqs.Queue;
}

/** Build the maintenance function, its schedule and its failure queue in `stack`. */
export function buildMaintenance(stack: Stack, props: MaintenanceProps): Maintenance {
  // orphan recovery (bare metal) and the incomplete-consumer migration, every minute;
  // each task works in bounded batches and resumes where the previous run stopped
  const maintenance = new BerthFunction(stack, 'Maintenance', {
    entry: 'functions/maintenance/handler.ts',
    description: 'Scheduled maintenance: orphan recovery, incomplete-consumer migration',
    table: props.table,
    access: 'none',
    timeout: Duration.seconds(60),
    // it keeps a forest too: the forest image is written from it
    memoryMb: props.forestMemoryMb,
    largeHeap: true,
    // one run at a time: a run that outlasts the minute makes the next one wait, never overlap
    reservedConcurrency: 1,
  });
  grantTableAccess(maintenance.fn, props.table, MAINTENANCE_ACCESS);
  props.baremetal.grantOrphanRecovery(maintenance.fn);
  // the scheduled events of runs that failed (timeout, crash, a failed init) or could not
  // start in time, kept two weeks for the operator (docs/operating.md, "Operating in AWS")
  const failures = new sqs.Queue(stack, 'MaintenanceFailures', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(failures).acknowledge({
    id: 'AwsSolutions::AwsSolutions-SQS3',
    reason:
      'This queue is itself the failure destination of the maintenance function and its schedule; its messages are read by an operator, not redriven.',
  });
  const failed = new lambdaDestinations.SqsDestination(failures);
  maintenance.fn.configureAsyncInvoke({
    onFailure: failed,
    // the schedule is the retry: the next run starts a minute later and resumes where this
    // one stopped, so a retry would only repeat it (and wait for the one slot)
    retryAttempts: 0,
    // an event that could not start within two minutes (the slot was taken) is superseded by
    // the runs scheduled since; it goes to the queue, which says runs are backing up
    maxEventAge: Duration.minutes(2),
  });
  const schedule = new scheduler.Schedule(stack, 'MaintenanceSchedule', {
    schedule: scheduler.ScheduleExpression.rate(Duration.minutes(1)),
    // Scheduler's own retries cover failing to hand the event to Lambda (not the run)
    target: new schedulerTargets.LambdaInvoke(maintenance.fn, {
      retryAttempts: 2,
      maxEventAge: Duration.minutes(2),
      deadLetterQueue: failures,
    }),
    description: 'Berth maintenance every minute',
  });
  const maintenanceId = stack.getLogicalId(maintenance.fn.node.defaultChild as lambda.CfnFunction);
  // the scheduler's role is created at stack level (one per target), hence the stack-wide acknowledgement
  void schedule;
  Validations.of(stack).acknowledge({
    id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${maintenanceId}.Arn>:*]`,
    reason: 'The scheduler may invoke the maintenance function and its versions only.',
  });
  return { fn: maintenance.fn, failures };
}
