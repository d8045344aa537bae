/**
 * The stored image's chunks (functions/store/placement/image.ts): the JSON in slices,
 * each compressed on its own, every chunk small enough for a DynamoDB item as base64
 * text, and the slices decompressed and joined give the JSON back — also when the input
 * does not compress (a slice is halved until it fits).
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { compressSlices, IMAGE_CHUNK_BYTES } from '../../../functions/store/placement/image.js';

const join = (chunks: Buffer[]) => Buffer.concat(chunks.map((c) => gunzipSync(c)));

describe('image chunks', () => {
  it('round-trip JSON of several slices, each chunk under the item limit as base64', () => {
    const json = Buffer.from(
      JSON.stringify({ uuid: Array.from({ length: 80_000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`) }),
    );
    const chunks = compressSlices(json);
    expect(chunks.length).toBeGreaterThan(1);
    expect(join(chunks).equals(json)).toBe(true);
    for (const c of chunks) expect(c.toString('base64').length).toBeLessThan(400_000 - 1_000);
  });

  it('halve a slice that does not compress until each chunk fits', () => {
    const noise = Buffer.from(randomBytes(900_000).toString('hex'), 'latin1').subarray(0, 1_500_000);
    const chunks = compressSlices(noise);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(IMAGE_CHUNK_BYTES);
    expect(join(chunks).equals(noise)).toBe(true);
  });

  it('store an empty document as one chunk', () => {
    const chunks = compressSlices(Buffer.alloc(0));
    expect(chunks).toHaveLength(1);
    expect(join(chunks).length).toBe(0);
  });
});
