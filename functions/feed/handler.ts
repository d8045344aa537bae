/**
 * The stream processor's Lambda (cdk/lib/feed.ts): DynamoDB stream batches, filtered to
 * feed items by the event source mapping, → EventBridge (EVENT_BUS_NAME) and the
 * allocation history. Answers with the first record not done (ReportBatchItemFailures):
 * the mapping retries from there, so a change is never skipped and the ones before it
 * are not done again.
 */
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { config } from '../config.js';
import { eventBridgePublisher } from './eventbridge.js';
import { processRecords, type Publisher } from './processor.js';

let publisher: Publisher | undefined;

export async function handler(event: DynamoDBStreamEvent): Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }> {
  const bus = config().feed.eventBus;
  publisher ??= bus ? eventBridgePublisher(bus) : { publish: async () => undefined };
  const out = await processRecords(event.Records as never, { publisher });
  return { batchItemFailures: out.failed ? [{ itemIdentifier: out.failed }] : [] };
}
