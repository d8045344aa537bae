/**
 * The stored forest image (docs/consistency.md, "Cold start: the forest image"): a new
 * process loads one compact document and replays the change log since it was taken,
 * instead of reading every provider item through gsi1.
 *
 * Items (in the table, like everything else):
 *   FOREST / image              the manifest: which image is current, when it was taken
 *   IMG#<id>#<chunk> / IMG       the JSON of core/placement/forest-image.ts in slices, each
 *                                gzip-compressed on its own to IMAGE_CHUNK_BYTES and stored
 *                                as base64 text, one partition per chunk (docs/consistency.md,
 *                                "Cold start: the forest image", states their size and read)
 * Independent slices let a reader fetch them in parallel (BatchGetItem answers at most
 * 16 MB, so a few chunks per call, many calls in flight) and decompress each as it arrives
 * on libuv's thread pool, overlapping the network; base64 text (not a binary attribute)
 * spares the SDK's per-byte validation of binary values.
 * Chunks are written before the manifest that names them and are never changed; they
 * expire (TTL) two days later, so a reader holding an older manifest still finds its
 * chunks. The manifest only ever moves forward (a condition on takenAt), so two writers
 * cannot replace a newer image with an older one.
 *
 * Delta images (docs/consistency.md, "Delta images"): a manifest may name a `base` — a full
 * image written earlier, at most BASE_MAX_AGE_MS before — and its own chunks then hold
 * only the providers whose records differ from the base's (and the uuids of those
 * deleted since). The whole image is the base with the delta put in; a process whose
 * forest came from that same base takes the delta alone.
 */
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip, gzipSync } from 'node:zlib';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { BATCH_WRITE_MAX, batchPut, keyId } from '../ddb/batch.js';
import { batchGet, ddb } from '../ddb/reads.js';
import { Expr } from '../ddb/expr.js';
import { IMAGE_FORMAT, IMAGE_VERSION, type ForestImage } from '../../core/placement/forest-image.js';
import { decodeDelta, decodeForest, decodeSome, imageUuids } from '../../core/placement/forest-image-decode.js';
import { encodeDelta, encodeForest } from '../../core/placement/forest-image-encode.js';
import type { Forest } from '../../core/placement/forest.js';
import type { Interner } from '../../core/placement/forest-interner.js';
import type { ProviderRecord } from '../../core/placement/model.js';
import { tableName } from '../ddb/client.js';
import { K } from './keys.js';

/**
 * compressed bytes per chunk at most: base64 makes them 4/3 larger (DynamoDB's items stop at
 * 400 KB). Smaller than that allows: every cold container reads every chunk, and a chunk's
 * partition serves 3,000 read units/s (an eventually consistent read of 135 KB is 17)
 */
export const IMAGE_CHUNK_BYTES = 100_000;
/** uncompressed JSON per slice (halved until its compressed form fits a chunk) */
const SLICE_BYTES = 1_000_000;
/** how chunks are stored; a manifest saying anything else is not read (the index is) */
export const CHUNK_ENCODING = 'gzip-slices-base64';
/** chunks per BatchGetItem call: its answer stops at 16 MB (calls in flight: batchGet's 16) */
const CHUNKS_PER_GET = 24;
const gunzipAsync = promisify(gunzip);
/** chunks outlive the manifest that named them by this long */
export const IMAGE_CHUNK_TTL_S = 2 * 24 * 3600;
/**
 * A delta names a base written at most this long before: its chunks outlive it by a day
 * and a half, longer than a reader keeps using an image (IMAGE_MAX_AGE_MS in
 * core/placement/refresh-plan.ts).
 */
export const BASE_MAX_AGE_MS = 12 * 3600 * 1000;

/** A full image, as a delta's manifest names it. */
export interface ImageBase {
  id: string;
  chunks: number;
  bytes: number;
  providers: number;
  takenAt: number;
  writtenAt: number;
}

export interface ImageManifest {
  id: string;
  format: string;
  version: number;
  chunkEncoding: string;
  /** every write committed before this instant (ms) is in the image */
  takenAt: number;
  /** when the forest it was made from last read every provider through the index */
  indexLoadAt: number;
  writtenAt: number;
  /** providers in the whole image (the base's with the delta's changes) */
  providers: number;
  /** this image's own chunks and their compressed bytes (a delta's: the delta only) */
  chunks: number;
  bytes: number;
  /** a delta's base: the full image its chunks change */
  base?: ImageBase;
}

/** A full image's manifest as the base of a delta. */
export function asBase(m: ImageManifest): ImageBase {
  if (m.base) throw new Error('a delta image is no base');
  return { id: m.id, chunks: m.chunks, bytes: m.bytes, providers: m.providers, takenAt: m.takenAt, writtenAt: m.writtenAt };
}

export async function readManifest(): Promise<ImageManifest | undefined> {
  const r = await ddb().send(new GetCommand({ TableName: tableName(), Key: K.imageManifest, ConsistentRead: true }));
  const it = r.Item;
  if (!it || it.format !== IMAGE_FORMAT || Number(it.version) !== IMAGE_VERSION || it.chunkEncoding !== CHUNK_ENCODING) return undefined;
  return {
    id: String(it.id),
    format: String(it.format),
    version: Number(it.version),
    chunkEncoding: String(it.chunkEncoding),
    takenAt: Number(it.takenAt),
    indexLoadAt: Number(it.indexLoadAt ?? 0),
    writtenAt: Number(it.writtenAt),
    providers: Number(it.providers),
    chunks: Number(it.chunks),
    bytes: Number(it.bytes),
    ...(it.base ? { base: readBase(it.base as Record<string, unknown>) } : {}),
  };
}

function readBase(b: Record<string, unknown>): ImageBase {
  return {
    id: String(b.id),
    chunks: Number(b.chunks),
    bytes: Number(b.bytes),
    providers: Number(b.providers),
    takenAt: Number(b.takenAt),
    writtenAt: Number(b.writtenAt),
  };
}

export interface LoadedImage {
  forest: Forest;
  manifest: ImageManifest;
  /** change-log entries the image already holds (ForestImage.applied) */
  applied: string[];
  /** providers held as read in the last moments before takenAt, and their `last` (ForestImage.lasts) */
  lasts: Record<string, string>;
  /** the providers a delta image changes (put or deletes); none for a full image */
  deltaIds: string[];
  /** ms spent reading (decompression runs alongside), finishing decompression and joining, parsing, indexing */
  timings: { read: number; gunzip: number; parse: number; decode: number; put?: number };
}

/** The forest of the current (or given) image; undefined when there is none or a chunk is gone. */
export async function readImage(manifest?: ImageManifest): Promise<LoadedImage | undefined> {
  const m = manifest ?? (await readManifest());
  const got = m && (await fetchWhole(m));
  if (!got) return undefined;
  const t3 = performance.now();
  const forest = decodeForest(got.base ?? got.img);
  let deltaIds: string[] = [];
  if (got.base) {
    const d = decodeDelta(got.img, forest.intern);
    for (const u of d.deleted) forest.delete(u);
    forest.putMany(d.records);
    deltaIds = idsOf(d);
  }
  return {
    forest,
    manifest: m,
    applied: got.img.applied,
    lasts: got.img.lasts,
    deltaIds,
    timings: { ...got.timings, decode: performance.now() - t3 },
  };
}

function idsOf(d: { records: ProviderRecord[]; deleted: string[] }): string[] {
  return [...d.records.map((r) => r.uuid), ...d.deleted];
}

/** An image's own document and, for a delta, its base's: read together */
async function fetchWhole(m: ImageManifest): Promise<{ img: ForestImage; base?: ForestImage; timings: ImageTimings } | undefined> {
  if (!m.base) return fetchImage(m.id, m.chunks);
  const [base, own] = await Promise.all([fetchImage(m.base.id, m.base.chunks), fetchImage(m.id, m.chunks)]);
  if (!base || !own) return undefined;
  const timings = { read: Math.max(base.timings.read, own.timings.read), gunzip: 0, parse: base.timings.parse + own.timings.parse };
  timings.gunzip = Math.max(base.timings.read + base.timings.gunzip, own.timings.read + own.timings.gunzip) - timings.read;
  return { img: own.img, base: base.img, timings };
}

/**
 * Of the given image, only the records of the providers in `only` (those it holds), their
 * shared parts from `intern` (the interner of the forest they go to); undefined when a chunk is gone.
 */
export async function readImageSome(
  m: ImageManifest,
  only: ReadonlySet<string>,
  intern?: Interner,
): Promise<(Omit<LoadedImage, 'forest'> & { records: ProviderRecord[] }) | undefined> {
  const got = await fetchWhole(m);
  if (!got) return undefined;
  const t3 = performance.now();
  let records = decodeSome(got.base ?? got.img, only, intern);
  let deltaIds: string[] = [];
  if (got.base) {
    // the delta's records replace the base's; its deletions remove them
    deltaIds = [...imageUuids(got.img), ...got.img.deleted];
    const replaced = new Set(deltaIds);
    records = [...records.filter((r) => !replaced.has(r.uuid)), ...decodeSome(got.img, only, intern)];
  }
  return {
    records,
    manifest: m,
    applied: got.img.applied,
    lasts: got.img.lasts,
    deltaIds,
    timings: { ...got.timings, decode: performance.now() - t3 },
  };
}

/**
 * Of a delta image, every record it holds and the uuids it deletes — without its base: for
 * a forest that came from that same base. Undefined when a chunk is gone.
 */
export async function readDelta(
  m: ImageManifest,
  intern: Interner,
): Promise<(Omit<LoadedImage, 'forest'> & { records: ProviderRecord[]; deleted: string[] }) | undefined> {
  const got = await fetchImage(m.id, m.chunks);
  if (!got) return undefined;
  const t3 = performance.now();
  const d = decodeDelta(got.img, intern);
  return {
    ...d,
    manifest: m,
    applied: got.img.applied,
    lasts: got.img.lasts,
    deltaIds: idsOf(d),
    timings: { ...got.timings, decode: performance.now() - t3 },
  };
}

type ImageTimings = { read: number; gunzip: number; parse: number };

/** An image's chunks, read, decompressed and parsed */
async function fetchImage(id: string, chunks: number): Promise<{ img: ForestImage; timings: ImageTimings } | undefined> {
  const t0 = performance.now();
  const keys = Array.from({ length: chunks }, (_, i) => K.imageChunk(id, i));
  const position = new Map(keys.map((k, i) => [keyId(k), i]));
  const parts: Buffer[] = new Array(keys.length);
  const unzipping: Promise<void>[] = [];
  await batchGet(keys, {
    // chunks never change: an eventually consistent read is enough (and half the cost)
    consistent: false,
    keysPerCall: CHUNKS_PER_GET,
    // each slice is decompressed on the thread pool as soon as it arrives
    onItem: (it) => {
      const i = position.get(keyId(it as { pk: string; sk: string }))!;
      unzipping.push(
        gunzipAsync(Buffer.from(String(it.data), 'base64')).then((b) => {
          parts[i] = b;
        }),
      );
    },
  });
  const read = performance.now() - t0;
  await Promise.all(unzipping);
  for (let i = 0; i < keys.length; i++) if (!parts[i]) return undefined;
  const json = Buffer.concat(parts).toString('utf8');
  const t2 = performance.now();
  const img = JSON.parse(json) as ForestImage;
  return { img, timings: { read, gunzip: t2 - t0 - read, parse: performance.now() - t2 } };
}

/** The JSON in slices, each gzip-compressed on its own to at most IMAGE_CHUNK_BYTES. */
export function compressSlices(json: Buffer): Buffer[] {
  const out: Buffer[] = [];
  const add = (slice: Buffer) => {
    const z = gzipSync(slice, { level: 6 });
    if (z.length <= IMAGE_CHUNK_BYTES || slice.length < 2) out.push(z);
    else {
      const half = slice.length >> 1;
      add(slice.subarray(0, half));
      add(slice.subarray(half));
    }
  };
  if (!json.length) add(json);
  for (let off = 0; off < json.length; off += SLICE_BYTES) add(json.subarray(off, off + SLICE_BYTES));
  return out;
}

async function writeChunks(items: Record<string, unknown>[]): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += BATCH_WRITE_MAX) batches.push(items.slice(i, i + BATCH_WRITE_MAX));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) await batchPut(batches[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(4, batches.length) }, worker));
}

/**
 * Store the image of `forest` as of `takenAt` and make it current — unless a newer one
 * is current already (then it is left as it is and that manifest is returned). With
 * `delta`, only the providers of `changed` are stored, as changes to `base` (the caller
 * vouches that every other provider's record is the base's: snapshot-load.ts keeps
 * `base` and `dirty`).
 */
export async function writeImage(
  forest: Forest,
  takenAt: number,
  indexLoadAt: number,
  applied: string[] = [],
  delta?: { base: ImageBase; changed: ReadonlySet<string> },
  lasts: Record<string, string> = {},
): Promise<{ manifest: ImageManifest; written: boolean }> {
  const doc = delta ? encodeDelta(forest, delta.changed, takenAt, applied, lasts) : encodeForest(forest, takenAt, applied, lasts);
  const chunks = compressSlices(Buffer.from(JSON.stringify(doc), 'utf8'));
  const id = `${takenAt}-${randomBytes(4).toString('hex')}`;
  const now = Date.now();
  const ttl = Math.floor(now / 1000) + IMAGE_CHUNK_TTL_S;
  const items = chunks.map((c, i) => ({ ...K.imageChunk(id, i), data: c.toString('base64'), ttl }));
  await writeChunks(items);
  const manifest: ImageManifest = {
    id,
    format: IMAGE_FORMAT,
    version: IMAGE_VERSION,
    chunkEncoding: CHUNK_ENCODING,
    takenAt,
    indexLoadAt,
    writtenAt: now,
    providers: forest.size,
    chunks: items.length,
    bytes: chunks.reduce((n, c) => n + c.length, 0),
    ...(delta ? { base: delta.base } : {}),
  };
  // stored over an older image only (none, or one taken before)
  const older = new Expr();
  older.when(older.or(older.absent('pk'), older.lt('takenAt', takenAt)));
  try {
    await ddb().send(new PutCommand(older.putInput({ ...K.imageManifest, ...manifest })));
  } catch (e) {
    if ((e as Error).name !== 'ConditionalCheckFailedException') throw e;
    // a newer image is current — or ours is, and only the answer to our write was lost
    const current = await readManifest();
    if (current) return { manifest: current, written: current.id === id };
    throw e;
  }
  return { manifest, written: true };
}
