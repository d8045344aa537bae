/**
 * The change feed locally (`npm start`): the same stream processor as in AWS
 * (functions/feed/processor.ts) reading DynamoDB Local's stream, as Lambda's event source
 * mapping reads the table's stream, and appending every event as one JSON line to a file
 * (`.data/events.jsonl`, `--events-file F`) in the shape a rule target receives it.
 *
 * Like the mapping it keeps a position per shard (`<file>.checkpoint.json`, written
 * after each batch), resumes there after a restart, handles a shard's parent before the
 * shard, and resumes a failed batch at its first failed record. Exactly once in the
 * file: a batch retried after a crash between its lines and its checkpoint finds its
 * changes' ids at the end of the file and does not write them again.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { FeedEvent } from '../functions/core/feed/event-envelope.js';
import { uuid5 } from '../functions/core/compat/uuid.js';

export interface LocalFeedOptions {
  /** DynamoDB (Local) holding the table and its stream */
  endpoint: string;
  table: string;
  region?: string;
  eventsFile: string;
  /** how often the stream is read (ms; default 200) */
  intervalMs?: number;
}

export interface LocalFeed {
  eventsFile: string;
  /** read until a pass finds nothing new */
  drain(): Promise<void>;
  stop(): Promise<void>;
  stats: { events: number; batches: number; failedBatches: number; duplicatesSkipped: number };
}

interface Checkpoint {
  streamArn?: string;
  /** shard id -> the last sequence number done, or 'done' for a closed shard read to its end */
  shards: Record<string, string>;
}

/** the namespace of the envelope id (uuid5 of the change id): one change, one id */
const ENVELOPE_NS = '0c9f7f55-5d3b-5c52-a3cf-37a39a3e8b0b';

/** An event as an EventBridge rule target receives it. */
export function envelope(e: FeedEvent, region: string): Record<string, unknown> {
  return {
    version: '0',
    id: uuid5(ENVELOPE_NS, String(e.detail.id)),
    'detail-type': e.detailType,
    source: e.source,
    account: '000000000000',
    time: e.time.replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [],
    detail: e.detail,
  };
}

/** the change ids among the last lines of `file` (a retried batch's lines are at its end) */
function recentIds(file: string, bytes = 4 * 1024 * 1024): Set<string> {
  const ids = new Set<string>();
  if (!existsSync(file)) return ids;
  const size = statSync(file).size;
  const text = readFileSync(file)
    .subarray(Math.max(0, size - bytes))
    .toString('utf8');
  for (const line of text.split('\n')) {
    const m = /"detail":\{"version":"1","id":"([^"]+)"/.exec(line);
    if (m) ids.add(m[1]!);
  }
  return ids;
}

export async function startLocalFeed(o: LocalFeedOptions): Promise<LocalFeed> {
  const region = o.region ?? 'local';
  mkdirSync(dirname(o.eventsFile), { recursive: true });
  const cpFile = `${o.eventsFile}.checkpoint.json`;
  let cp: Checkpoint = existsSync(cpFile) ? (JSON.parse(readFileSync(cpFile, 'utf8')) as Checkpoint) : { shards: {} };
  const saveCp = () => {
    writeFileSync(`${cpFile}.tmp`, JSON.stringify(cp));
    renameSync(`${cpFile}.tmp`, cpFile);
  };
  const seen = recentIds(o.eventsFile);
  const stats = { events: 0, batches: 0, failedBatches: 0, duplicatesSkipped: 0 };
  const client = new DynamoDBStreamsClient({
    endpoint: o.endpoint,
    region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 3,
  });
  // the processor, as the handlers: imported once the environment is set (local/start.ts)
  const { processRecords } = await import('../functions/feed/processor.js');
  const publisher = {
    async publish(events: FeedEvent[]) {
      const lines: string[] = [];
      for (const e of events) {
        const id = String(e.detail.id);
        if (seen.has(id)) {
          stats.duplicatesSkipped++;
          continue;
        }
        seen.add(id);
        lines.push(JSON.stringify(envelope(e, region)));
      }
      if (lines.length) appendFileSync(o.eventsFile, `${lines.join('\n')}\n`);
      stats.events += lines.length;
    },
  };

  async function streamArn(): Promise<string | undefined> {
    const r = await client.send(new ListStreamsCommand({ TableName: o.table }));
    const streams = (r.Streams ?? [])
      .filter((s) => s.TableName === o.table)
      .sort((a, b) => String(a.StreamLabel).localeCompare(String(b.StreamLabel)));
    return streams.at(-1)?.StreamArn;
  }

  /** every shard, parents before children */
  async function shards(arn: string): Promise<Shard[]> {
    const all: Shard[] = [];
    let start: string | undefined;
    do {
      const d = await client.send(new DescribeStreamCommand({ StreamArn: arn, ExclusiveStartShardId: start }));
      all.push(...(d.StreamDescription?.Shards ?? []));
      start = d.StreamDescription?.LastEvaluatedShardId;
    } while (start);
    const ids = new Set(all.map((s) => s.ShardId));
    const out: Shard[] = [];
    const placed = new Set<string>();
    const place = (s: Shard) => {
      if (placed.has(s.ShardId!)) return;
      const parent = s.ParentShardId && ids.has(s.ParentShardId) ? all.find((x) => x.ShardId === s.ParentShardId) : undefined;
      if (parent) place(parent);
      placed.add(s.ShardId!);
      out.push(s);
    };
    for (const s of all) place(s);
    return out;
  }

  /** one pass over every shard; true when something was read */
  async function pass(): Promise<boolean> {
    const arn = await streamArn();
    if (!arn) return false;
    if (cp.streamArn !== arn) cp = { streamArn: arn, shards: {} };
    let read = false;
    for (const s of await shards(arn)) {
      const id = s.ShardId!;
      if (cp.shards[id] === 'done') continue;
      if (s.ParentShardId && cp.shards[s.ParentShardId] !== undefined && cp.shards[s.ParentShardId] !== 'done') break;
      const after = cp.shards[id];
      const it = await client.send(
        new GetShardIteratorCommand({
          StreamArn: arn,
          ShardId: id,
          ShardIteratorType: after ? 'AFTER_SEQUENCE_NUMBER' : 'TRIM_HORIZON',
          ...(after ? { SequenceNumber: after } : {}),
        }),
      );
      let iter = it.ShardIterator;
      while (iter) {
        const r = await client.send(new GetRecordsCommand({ ShardIterator: iter, Limit: 1000 }));
        const records = r.Records ?? [];
        iter = r.NextShardIterator;
        if (!records.length) {
          // a closed shard ends with no iterator: done
          if (!iter) cp.shards[id] = 'done';
          break;
        }
        read = true;
        stats.batches++;
        const out = await processRecords(records as never, { publisher });
        if (out.failed) {
          stats.failedBatches++;
          // resume at the failed record next time: the checkpoint is the record before it
          const at = records.findIndex((x) => x.dynamodb?.SequenceNumber === out.failed);
          if (at > 0) cp.shards[id] = records[at - 1]!.dynamodb!.SequenceNumber!;
          saveCp();
          return true;
        }
        cp.shards[id] = records.at(-1)!.dynamodb!.SequenceNumber!;
        saveCp();
      }
    }
    saveCp();
    return read;
  }

  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = pass()
      .catch((e: Error) => process.stderr.write(`[berth] change feed: ${e.message}\n`))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, o.intervalMs ?? 200);
      });
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(tick, 0);
  timer.unref?.();

  return {
    eventsFile: o.eventsFile,
    stats,
    async drain() {
      await running;
      for (let quiet = 0, passes = 0; quiet < 2 && passes < 500; passes++) {
        const before = stats.batches;
        await pass().catch(() => undefined);
        quiet = stats.batches === before ? quiet + 1 : 0;
      }
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      client.destroy();
    },
  };
}
