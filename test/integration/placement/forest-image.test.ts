/**
 * The forest image against DynamoDB Local, through the real handlers: a new process
 * (a reset snapshot) starts from the stored image and replays the change log since it,
 * so it shows every write acknowledged before it started — including writes made after
 * the image; a missing, unreadable or too old image falls back to the index; the image
 * writer makes images only when due; a bulk load ends with an image that running
 * processes catch up from instead of re-reading every provider.
 */
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvider } from '../fixtures.js';
import { startPlacement, type Api } from '../harness.js';

let api: Api;
let snap: typeof import('../../../functions/store/placement/snapshot.js');
let image: typeof import('../../../functions/store/placement/image.js');
let writer: typeof import('../../../functions/maintenance/image.js');
let client: typeof import('../../../functions/store/ddb/client.js');
let reads: typeof import('../../../functions/store/ddb/reads.js');
let cfg: typeof import('../../../functions/config.js');
let K: typeof import('../../../functions/store/placement/keys.js')['K'];

beforeAll(async () => {
  api = await startPlacement({ SNAPSHOT_RESYNC_S: '0', FOREST_IMAGE_INTERVAL_S: '0' });
  snap = await import('../../../functions/store/placement/snapshot.js');
  image = await import('../../../functions/store/placement/image.js');
  writer = await import('../../../functions/maintenance/image.js');
  client = await import('../../../functions/store/ddb/client.js');
  reads = await import('../../../functions/store/ddb/reads.js');
  cfg = await import('../../../functions/config.js');
  K = (await import('../../../functions/store/placement/keys.js')).K;
});
afterAll(async () => {
  await api.close();
  delete process.env.FOREST_IMAGE_INTERVAL_S;
  cfg.resetConfig();
});

const names = async () =>
  new Set(((await api.req('GET', '/resource_providers')).json.resource_providers as Array<{ name: string }>).map((p) => p.name));
/** change one attribute of the stored image manifest, as an older or another writer would have left it */
const setManifest = (attr: 'takenAt' | 'indexLoadAt', value: number) =>
  reads.ddb().send(
    new UpdateCommand({
      TableName: client.tableName(),
      Key: { pk: 'FOREST', sk: 'image' },
      UpdateExpression: 'SET #a = :v',
      ExpressionAttributeNames: { '#a': attr },
      ExpressionAttributeValues: { ':v': value },
    }),
  );
/** a new process: its snapshot starts from nothing */
const coldStart = () => snap.snapshot().reset();
/**
 * Bulk-load just past the point where `behind` would rather catch up through an image than
 * re-read the changed providers (a few hundred here: a fixed threshold of 1,000 re-read
 * them all); returns how many.
 */
async function loadPastBreakEven(behind: InstanceType<typeof snap.ProviderSnapshot>, prefix: string): Promise<number> {
  const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
  const costs = behind.catchUpCosts();
  const n = Math.ceil(costs.imageMs / costs.rereadMsPerProvider) + 50;
  await bulkLoadProviders(Array.from({ length: n }, (_, i) => ({ uuid: randomUUID(), name: `${prefix}${i}` })));
  return n;
}

describe('the forest image', () => {
  it('starts a new process from the image and the change log since it: every acknowledged write is there', async () => {
    const before = await createProvider(api, { name: 'img-before', inventories: { VCPU: { total: 4 } } });
    expect(await writer.refreshForestImage()).toMatchObject({ written: true, reason: 'no image yet' });
    // writes after the image was taken
    const after = await createProvider(api, { name: 'img-after' });
    expect((await api.req('DELETE', `/resource_providers/${before}`)).status).toBe(204);
    coldStart();
    const s = snap.snapshot();
    const seen = await names();
    expect(seen.has('img-after')).toBe(true);
    expect(seen.has('img-before')).toBe(false);
    expect(s.stats).toMatchObject({ coldLoads: 1, imageLoads: 1, lastLoad: expect.objectContaining({ source: 'image' }) });
    // only what changed after the image was read provider by provider
    expect(s.stats.providerReads).toBeLessThanOrEqual(2);
    expect((await s.fresh()).get(after)?.name).toBe('img-after');
  });

  it('is written only when due: not again while the forest is unchanged', async () => {
    // the writes of the test before: the writer's forest changed since its image
    expect(await writer.refreshForestImage()).toMatchObject({ written: true, reason: 'the forest changed' });
    // nothing since (re-reading the change log's overlap window changes nothing)
    expect(await writer.refreshForestImage()).toMatchObject({ written: false, reason: 'the image is recent' });
    await createProvider(api);
    expect(await writer.refreshForestImage()).toMatchObject({ written: true, reason: 'the forest changed' });
  });

  it('never replaces a newer image with an older one', async () => {
    const current = (await image.readManifest())!;
    const older = await image.writeImage(snap.snapshot().forest, current.takenAt - 60_000, current.indexLoadAt);
    expect(older.written).toBe(false);
    expect(older.manifest.id).toBe(current.id);
  });

  it('falls back to the index when the image is missing, unreadable or too old', async () => {
    const m = (await image.readManifest())!;
    const mark = `fallback-${randomUUID().slice(0, 8)}`;
    await createProvider(api, { name: mark });
    // a chunk gone
    await reads.ddb().send(new DeleteCommand({ TableName: client.tableName(), Key: K.imageChunk(m.id, 0) }));
    coldStart();
    expect((await names()).has(mark)).toBe(true);
    expect(snap.snapshot().stats).toMatchObject({ imageLoads: 0, lastLoad: expect.objectContaining({ source: 'index' }) });
    // an image older than the change log it needs
    await writer.refreshForestImage({ force: true });
    const fresh = (await image.readManifest())!;
    await setManifest('takenAt', fresh.takenAt - 21 * 3600 * 1000);
    coldStart();
    expect((await names()).has(mark)).toBe(true);
    expect(snap.snapshot().stats.imageLoads).toBe(0);
    // another format
    await reads
      .ddb()
      .send(new PutCommand({ TableName: client.tableName(), Item: { pk: 'FOREST', sk: 'image', ...fresh, format: 'something-else' } }));
    coldStart();
    expect((await names()).has(mark)).toBe(true);
    expect(snap.snapshot().stats.imageLoads).toBe(0);
    // chunks stored another way (an image of an earlier release)
    await reads
      .ddb()
      .send(new PutCommand({ TableName: client.tableName(), Item: { pk: 'FOREST', sk: 'image', ...fresh, chunkEncoding: 'gzip-binary' } }));
    coldStart();
    expect((await names()).has(mark)).toBe(true);
    expect(snap.snapshot().stats.imageLoads).toBe(0);
    await writer.refreshForestImage({ force: true });
  });

  it('a bulk load ends with an image holding the load and what others wrote meanwhile; a new process starts from it', async () => {
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    const { imageAfterBulkLoad } = await import('../../../functions/store/placement/bulk-image.js');
    const s = snap.snapshot();
    await s.fresh();
    const loaded = await bulkLoadProviders(
      Array.from({ length: 2500 }, (_, i) => ({ uuid: randomUUID(), name: `bulk-${i}`, inventories: { VCPU: { total: 8 } } })),
    );
    // someone else writes during the load: the loader's image must not hide it
    const other = await createProvider(api, { name: 'during-load' });
    const img = await imageAfterBulkLoad(loaded);
    expect(img.written).toBe(true);
    // a new process
    coldStart();
    const warm = snap.snapshot();
    await warm.fresh();
    expect(warm.stats.lastLoad?.source).toBe('image');
    // the loader's own entries are in the image's applied list: not re-read on replay
    expect(warm.stats.providerReads).toBeLessThan(50);
    const readsBefore = warm.stats.providerReads;
    const forest = await warm.fresh();
    expect(forest.get(other)?.name).toBe('during-load');
    expect(forest.size).toBeGreaterThanOrEqual(2500);
    expect(warm.stats.providerReads - readsBefore).toBeLessThan(100);
  });

  it('a bulk load longer than the resync period does not make the loader re-read every provider before its image', async () => {
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    process.env.SNAPSHOT_RESYNC_S = '1';
    cfg.resetConfig();
    try {
      const loader = new snap.ProviderSnapshot({ useImage: false });
      await loader.fresh();
      const other = new snap.ProviderSnapshot({ useImage: false });
      await other.fresh();
      const loaded = await bulkLoadProviders(Array.from({ length: 3 }, (_, i) => ({ uuid: randomUUID(), name: `long-load-${i}` })));
      loader.absorb(loaded.records, loaded.logEntries);
      await new Promise((r) => setTimeout(r, 1_200));
      const forest = await loader.fresh(0);
      await other.fresh(0);
      // the loader knows what it wrote: no resync through the index (a million providers: minutes)
      expect(loader.stats.resyncs).toBe(0);
      expect([...forest.providers.values()].filter((p) => p.name.startsWith('long-load-'))).toHaveLength(3);
      // any other process keeps its safety net
      expect(other.stats.resyncs).toBe(1);
    } finally {
      process.env.SNAPSHOT_RESYNC_S = '0';
      cfg.resetConfig();
    }
  });

  it('a warm reload never reads the index while images come: it waits for a newer one and loads it beside the forest, which keeps answering', async () => {
    const { ddbCallsDuring } = await import('../../../bench/kit.js');
    const source = snap.imageSourceSnapshot();
    // the writer has just read the index
    source.reset();
    await writer.refreshForestImage({ force: true });
    coldStart();
    const s = snap.snapshot();
    await s.fresh();
    const before = { ...s.stats };
    // (a period long enough that the writer's index read above is not two periods old when the reload is due)
    process.env.SNAPSHOT_RESYNC_S = '3';
    cfg.resetConfig();
    try {
      // due just now (the period after the index read this forest's image came from): well within two periods
      await new Promise((r) => setTimeout(r, Math.max(0, s.indexLoadedAt + 3_100 - Date.now())));
      // due, but the writer has not read the index since this forest's image: wait, keep answering
      const a = await ddbCallsDuring(() => s.fresh());
      expect(a.calls.filter((c) => c.input.IndexName)).toEqual([]);
      expect(s.stats).toMatchObject({ resyncs: before.resyncs, imageLoads: before.imageLoads });
      // the writer reads the index again (its own resync) and writes an image: the next reload takes it, beside
      source.reset();
      expect(await writer.refreshForestImage()).toMatchObject({ written: true });
      (s as unknown as { reloadPendingUntil: number }).reloadPendingUntil = 0;
      const b = await ddbCallsDuring(async () => {
        const forest = await s.fresh();
        // answered from the forest it had: the new one is still loading
        expect(s.stats.resyncs).toBe(before.resyncs);
        const during = await createProvider(api, { name: `during-reload-${randomUUID()}` });
        // the reload finishes in the background; a refresh after it takes the new forest
        for (let i = 0; i < 100 && s.stats.resyncs === before.resyncs; i++) {
          await new Promise((r) => setTimeout(r, 20));
          await s.fresh();
        }
        expect(s.stats.resyncs).toBe(before.resyncs + 1);
        expect(s.forest).not.toBe(forest);
        // a write acknowledged while the new forest loaded is in it
        expect((await s.fresh()).get(during)).toBeDefined();
      });
      expect(b.calls.filter((c) => c.input.IndexName)).toEqual([]);
      expect(s.stats.imageLoads).toBe(before.imageLoads + 1);
    } finally {
      process.env.SNAPSHOT_RESYNC_S = '0';
      cfg.resetConfig();
    }
  });

  it('after a long gap, goes to a newer image holding many more providers without first reading the whole log since', async () => {
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    const peek = new snap.ProviderSnapshot({ useImage: true, longGapMs: 0 });
    const control = new snap.ProviderSnapshot({ useImage: true, longGapMs: Number.POSITIVE_INFINITY });
    await peek.fresh();
    await control.fresh();
    // more providers than the forest holds: most of it would be rebuilt anyway
    const n = Math.max(1500, peek.forest.size + 100);
    await bulkLoadProviders(Array.from({ length: n }, (_, i) => ({ uuid: randomUUID(), name: `bulk4-${i}` })));
    await writer.refreshForestImage({ force: true });
    const before = { peek: { ...peek.stats }, control: { ...control.stats } };
    const a = await peek.fresh(0);
    const b = await control.fresh(0);
    for (const [s, was, f] of [
      [peek, before.peek, a],
      [control, before.control, b],
    ] as const) {
      expect(s.stats.imageLoads).toBe(was.imageLoads + 1);
      expect(s.stats.providerReads - was.providerReads).toBeLessThan(100);
      expect([...f.providers.values()].filter((p) => p.name.startsWith('bulk4-'))).toHaveLength(n);
    }
    // the control read the log since its last refresh first, then again since the image
    expect(peek.stats.logQueries - before.peek.logQueries).toBeLessThan(control.stats.logQueries - before.control.logQueries);
  });

  it('a warm process far behind switches to a newer image instead of re-reading every provider', async () => {
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    const behind = new snap.ProviderSnapshot({ useImage: true });
    await behind.fresh();
    const reads0 = behind.stats.providerReads;
    await bulkLoadProviders(
      Array.from({ length: 2500 }, (_, i) => ({ uuid: randomUUID(), name: `bulk2-${i}`, inventories: { VCPU: { total: 8 } } })),
    );
    // an image taken right after the load: the load's change-log entries are in its overlap
    // window, and the image names them as applied, so switching to it re-reads none of them
    await writer.refreshForestImage({ force: true });
    const imageLoads = behind.stats.imageLoads;
    const forest = await behind.fresh();
    expect(behind.stats.imageLoads).toBe(imageLoads + 1);
    expect(behind.stats.providerReads - reads0).toBeLessThan(2500);
    expect([...forest.providers.values()].filter((p) => p.name.startsWith('bulk2-'))).toHaveLength(2500);
  });
  it('catches up through the image once re-reading the changed providers would cost more than loading it', async () => {
    const behind = new snap.ProviderSnapshot({ useImage: true });
    await behind.fresh();
    const reads0 = behind.stats.providerReads;
    const n = await loadPastBreakEven(behind, 'bulk3-');
    await writer.refreshForestImage({ force: true });
    const imageLoads = behind.stats.imageLoads;
    const forest = await behind.fresh();
    expect(behind.stats.imageLoads).toBe(imageLoads + 1);
    expect(behind.stats.providerReads - reads0).toBeLessThan(100);
    expect([...forest.providers.values()].filter((p) => p.name.startsWith('bulk3-'))).toHaveLength(n);
  });

  it('catching up through the image takes from it only the providers the change log names, and ends where a new process starts', async () => {
    const behind = new snap.ProviderSnapshot({ useImage: true });
    const parent = await createProvider(api, { name: 'patch-parent', inventories: { VCPU: { total: 4 } } });
    const doomed = await createProvider(api, { name: 'patch-doomed' });
    await behind.fresh();
    const n = await loadPastBreakEven(behind, 'bulk7-');
    // a change that bumps no generation (the parent's child count), a changed inventory, a deletion
    const child = await createProvider(api, { name: 'patch-child', parent });
    const inv = await api.req('PUT', `/resource_providers/${parent}/inventories`, {
      body: {
        resource_provider_generation: (await api.req('GET', `/resource_providers/${parent}`)).json.generation,
        inventories: { VCPU: { total: 8 } },
      },
    });
    expect(inv.status, inv.text).toBe(200);
    expect((await api.req('DELETE', `/resource_providers/${doomed}`)).status).toBe(204);
    await writer.refreshForestImage({ force: true });
    const after = await createProvider(api, { name: 'patch-after-image' });
    // the image is more than the clocks' skew old when the log is read
    await new Promise((r) => setTimeout(r, 1100));
    // its writer read the index just now: that does not make the patched forest a full load
    const m = (await image.readManifest())!;
    await setManifest('indexLoadAt', Date.now());
    const indexLoaded = behind.indexLoadedAt;
    expect(indexLoaded).toBeLessThan(m.takenAt);
    const before = { ...behind.stats };
    const size = behind.forest.size;
    const forest = await behind.fresh();
    expect(behind.stats.imagePatches).toBe(before.imagePatches + 1);
    expect(behind.indexLoadedAt).toBe(indexLoaded);
    // the same forest object, patched; only what changed after the image re-read one by one
    expect(forest.size).toBe(size + n + 2 - 1);
    expect(behind.stats.providerReads - before.providerReads).toBeLessThan(10);
    expect(forest.get(after)?.name).toBe('patch-after-image');
    expect(forest.get(doomed)).toBeUndefined();
    expect(forest.get(child)?.parent).toBe(parent);
    // every provider as a new process sees it
    const fresh = new snap.ProviderSnapshot({ useImage: false });
    const truth = await fresh.fresh();
    expect(forest.size).toBe(truth.size);
    expect(forest.get(parent)).toMatchObject({ children: 1, inventories: { VCPU: expect.objectContaining({ total: 8 }) } });
    for (const [u, p] of truth.providers) expect(forest.get(u), u).toEqual(p);
  });

  it('keeps its forest when the image it would catch up through cannot be read: re-reads what changed, no cold load', async () => {
    const behind = new snap.ProviderSnapshot({ useImage: true });
    await behind.fresh();
    const n = await loadPastBreakEven(behind, 'bulk6-');
    await writer.refreshForestImage({ force: true });
    const m = (await image.readManifest())!;
    await reads.ddb().send(new DeleteCommand({ TableName: client.tableName(), Key: K.imageChunk(m.id, 0) }));
    const before = { ...behind.stats };
    const size = behind.forest.size;
    const forest = await behind.fresh();
    // neither the image nor a start over from the index: the changed providers, one by one
    expect(behind.stats).toMatchObject({ imageLoads: before.imageLoads, coldLoads: before.coldLoads, resyncs: before.resyncs });
    expect(behind.stats.providerReads - before.providerReads).toBe(n);
    expect(forest.size).toBe(size + n);
    expect([...forest.providers.values()].filter((p) => p.name.startsWith('bulk6-'))).toHaveLength(n);
    await writer.refreshForestImage({ force: true });
  });

  it('re-reads a few changed providers rather than loading a newer image', async () => {
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    const warm = new snap.ProviderSnapshot({ useImage: true });
    await warm.fresh();
    await bulkLoadProviders(Array.from({ length: 5 }, (_, i) => ({ uuid: randomUUID(), name: `bulk5-${i}` })));
    await writer.refreshForestImage({ force: true });
    const before = { ...warm.stats };
    const forest = await warm.fresh();
    expect(warm.stats.imageLoads).toBe(before.imageLoads);
    expect(warm.stats.providerReads - before.providerReads).toBe(5);
    expect([...forest.providers.values()].filter((p) => p.name.startsWith('bulk5-'))).toHaveLength(5);
  });
});

/** the forest holds every provider exactly as a process reading them all through the index does */
async function expectAsTheIndexHasIt(forest: InstanceType<typeof snap.ProviderSnapshot>['forest']) {
  const truth = await new snap.ProviderSnapshot({ useImage: false }).fresh();
  expect(forest.size).toBe(truth.size);
  for (const [u, p] of truth.providers) expect(forest.get(u), u).toEqual(p);
}
const settle = () => new Promise((r) => setTimeout(r, 1100));

describe('delta images', () => {
  beforeAll(async () => {
    // a forest large enough that a load past the break-even point changes less than a quarter of it
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    await bulkLoadProviders(Array.from({ length: 3000 }, (_, i) => ({ uuid: randomUUID(), name: `delta-base-${i}` })));
    // until the load's change-log entries have left the overlap window, every image carries
    // the `last` of each provider it loaded (readers need those to apply nothing twice): a
    // writer reading the 3,000 back quickly would then write a delta as large as that list
    const { overlapMs } = await import('../../../functions/store/placement/changelog.js');
    await new Promise((r) => setTimeout(r, overlapMs() + 100));
  });

  it('a writer stores a delta of its last full image while little has changed, a full image once much has; a new process starts from base and delta', async () => {
    const doomed = await createProvider(api, { name: 'delta-doomed' });
    const w = new snap.ProviderSnapshot({ useImage: false });
    await w.fresh();
    const full = await w.writeImage();
    expect(full.written).toBe(true);
    expect(full.manifest.base).toBeUndefined();
    const kept = await createProvider(api, { name: 'delta-kept', inventories: { VCPU: { total: 4 } } });
    expect((await api.req('DELETE', `/resource_providers/${doomed}`)).status).toBe(204);
    await w.fresh(0);
    const d = await w.writeImage();
    expect(d.written).toBe(true);
    expect(d.manifest.base?.id).toBe(full.manifest.id);
    expect(d.manifest.providers).toBe(w.forest.size);
    expect(d.manifest.bytes).toBeLessThan(full.manifest.bytes / 10);
    coldStart();
    const forest = await snap.snapshot().fresh();
    expect(snap.snapshot().stats).toMatchObject({ imageLoads: 1, lastLoad: { source: 'image', takenAt: d.manifest.takenAt } });
    expect(forest.get(kept)?.name).toBe('delta-kept');
    expect(forest.get(doomed)).toBeUndefined();
    await expectAsTheIndexHasIt(forest);
    // more than a quarter of the forest changed: a full image again, the base of what follows
    const { bulkLoadProviders } = await import('../../../functions/store/placement/bulk.js');
    const n = Math.ceil(w.forest.size / 3);
    await bulkLoadProviders(Array.from({ length: n }, (_, i) => ({ uuid: randomUUID(), name: `bulk9-${i}` })));
    await w.fresh(0);
    const again = await w.writeImage();
    expect(again).toMatchObject({ written: true, manifest: { providers: w.forest.size } });
    expect(again.manifest.base).toBeUndefined();
    await createProvider(api, { name: 'delta-next' });
    await w.fresh(0);
    expect((await w.writeImage()).manifest.base?.id).toBe(again.manifest.id);
  });

  it('a process whose forest came from the base catches up through the delta alone; a provider it changed since the base that the delta leaves alone, it reads again', async () => {
    const w = new snap.ProviderSnapshot({ useImage: false });
    const parent = await createProvider(api, { name: 'dp-parent', inventories: { VCPU: { total: 4 } } });
    const doomed = await createProvider(api, { name: 'dp-doomed' });
    await w.fresh();
    const full = await w.writeImage();
    const behind = new snap.ProviderSnapshot({ useImage: true });
    await behind.fresh();
    expect(behind.stats.lastLoad).toMatchObject({ source: 'image', takenAt: full.manifest.takenAt });
    // a child this process sees come and go: the image's writer sees neither (its parent ends as the base has it)
    const child = await createProvider(api, { name: 'dp-child', parent });
    expect((await behind.fresh(0)).get(child)).toBeDefined();
    expect((await api.req('DELETE', `/resource_providers/${child}`)).status).toBe(204);
    const n = await loadPastBreakEven(behind, 'bulk8-');
    expect((await api.req('DELETE', `/resource_providers/${doomed}`)).status).toBe(204);
    const other = await createProvider(api, { name: 'dp-other', inventories: { VCPU: { total: 2 } } });
    await w.fresh(0);
    const d = await w.writeImage();
    expect(d.manifest.base?.id).toBe(full.manifest.id);
    const after = await createProvider(api, { name: 'dp-after-image' });
    await settle();
    const before = { ...behind.stats };
    const size = behind.forest.size;
    const forest = await behind.fresh();
    expect(behind.stats.deltaPatches).toBe(before.deltaPatches + 1);
    // the child and the provider written after the image: read one by one; the load's providers: from the delta
    expect(behind.stats.providerReads - before.providerReads).toBeLessThan(10);
    expect(forest.size).toBe(size - 2 + n + 2);
    expect(forest.get(child)).toBeUndefined();
    expect(forest.get(doomed)).toBeUndefined();
    expect(forest.get(other)?.name).toBe('dp-other');
    expect(forest.get(after)?.name).toBe('dp-after-image');
    expect(forest.get(parent)?.children).toBe(0);
    await expectAsTheIndexHasIt(forest);
  });

  it('a process whose forest came from another image takes the changed providers from base and delta, and its next catch-up from a delta alone', async () => {
    const behind = new snap.ProviderSnapshot({ useImage: true });
    await behind.fresh();
    // another writer (a new maintenance container): its first image is a full one, a new base
    const w = new snap.ProviderSnapshot({ useImage: false });
    await w.fresh();
    const full = await w.writeImage();
    expect(full.manifest.base).toBeUndefined();
    await loadPastBreakEven(behind, 'bulk10-');
    await w.fresh(0);
    expect((await w.writeImage()).manifest.base?.id).toBe(full.manifest.id);
    await settle();
    const before = { ...behind.stats };
    await expectAsTheIndexHasIt(await behind.fresh());
    expect(behind.stats).toMatchObject({ imagePatches: before.imagePatches + 1, deltaPatches: before.deltaPatches });
    // now a known change of that base
    await loadPastBreakEven(behind, 'bulk11-');
    await w.fresh(0);
    expect((await w.writeImage()).manifest.base?.id).toBe(full.manifest.id);
    await settle();
    await expectAsTheIndexHasIt(await behind.fresh());
    expect(behind.stats).toMatchObject({ imagePatches: before.imagePatches + 2, deltaPatches: before.deltaPatches + 1 });
  });
});

describe('prewarming', () => {
  it('loads the snapshot when a forest function starts, and only when configured', async () => {
    coldStart();
    await snap.prewarm();
    expect(snap.snapshot().stats.refreshes).toBe(0);
    process.env.SNAPSHOT_PREWARM = 'true';
    cfg.resetConfig();
    try {
      await snap.prewarm();
      expect(snap.snapshot().stats.refreshes).toBe(1);
    } finally {
      delete process.env.SNAPSHOT_PREWARM;
      cfg.resetConfig();
    }
  });
});
