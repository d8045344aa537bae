import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { acceptsGzip, encodeResult, fitsPayload, payloadBytes, type TooLarge } from '../../../functions/http/encoding.js';
import type { HttpRequest } from '../../../functions/http/types.js';

const req = (accept?: string): HttpRequest => ({
  method: 'GET',
  path: '/resource_providers',
  rawQuery: '',
  headers: accept ? { 'accept-encoding': accept } : {},
  baseUrl: 'http://x',
  requestId: 'req-1',
});
const big = JSON.stringify({
  items: Array.from({ length: 2000 }, (_, i) => ({ uuid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`, name: `n${i}` })),
});
const refuse: TooLarge = (_r, s) => ({
  status: 400,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ too: s.bytes, compressed: s.compressed }),
});

describe('Accept-Encoding', () => {
  it('accepts gzip explicitly, through *, and not with q=0', () => {
    expect(acceptsGzip('gzip, deflate')).toBe(true);
    expect(acceptsGzip('deflate, *')).toBe(true);
    expect(acceptsGzip('gzip;q=0, deflate')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('br;q=1.0, GZIP;q=0.5')).toBe(true);
  });
});

describe('encodeResult', () => {
  it('compresses a large answer when the client accepts gzip, and the bytes decompress to the body', () => {
    const r = encodeResult(
      req('gzip, deflate'),
      { status: 200, headers: { 'content-type': 'application/json' }, body: big },
      6 * 1024 * 1024,
      refuse,
    );
    expect(r.isBase64Encoded).toBe(true);
    expect(r.headers?.['content-encoding']).toBe('gzip');
    expect(String(r.headers?.vary)).toMatch(/Accept-Encoding/);
    expect(gunzipSync(Buffer.from(r.body!, 'base64')).toString()).toBe(big);
    expect(payloadBytes(r)).toBeLessThan(big.length / 3);
  });

  it('sends small answers and answers to clients without gzip as they are', () => {
    const small = encodeResult(req('gzip'), { status: 200, headers: {}, body: '{"a":1}' }, 6 * 1024 * 1024, refuse);
    expect(small.isBase64Encoded).toBe(false);
    expect(small.body).toBe('{"a":1}');
    const plain = encodeResult(req(), { status: 200, headers: { vary: 'openstack-api-version' }, body: big }, 6 * 1024 * 1024, refuse);
    expect(plain.body).toBe(big);
    expect(plain.headers?.vary).toBe('openstack-api-version, Accept-Encoding');
  });

  it('answers with the API error when the payload does not fit, compressed or not', () => {
    const limit = 20_000;
    const compressed = encodeResult(req('gzip'), { status: 200, headers: {}, body: big }, limit, refuse);
    expect(payloadBytes(compressed)).toBeLessThanOrEqual(limit); // fits once compressed
    expect(compressed.statusCode).toBe(200);
    const uncompressed = encodeResult(req(), { status: 200, headers: {}, body: big }, limit, refuse);
    expect(uncompressed.statusCode).toBe(400);
    expect(JSON.parse(uncompressed.body!)).toEqual({ too: big.length, compressed: false });
    const hopeless = encodeResult(req('gzip'), { status: 200, headers: {}, body: big }, 1000, refuse);
    expect(hopeless.statusCode).toBe(400);
    expect(JSON.parse(hopeless.body!).compressed).toBe(true);
  });

  it('lets everything through when the limit is lifted (0)', () => {
    expect(encodeResult(req(), { status: 200, headers: {}, body: big }, 0, refuse).body).toBe(big);
  });
});

describe('fitsPayload', () => {
  it('says what measuring the serialised payload says, at every limit around its size', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer({ min: -40, max: 40 }), (body, delta) => {
        const r = { statusCode: 200, headers: { 'content-type': 'application/json' }, body, isBase64Encoded: false };
        const size = payloadBytes(r);
        for (const limit of [size + delta, size, size - 1, Math.floor(size / 3)]) {
          if (limit > 0) expect(fitsPayload(r, limit)).toBe(size <= limit);
        }
      }),
      { numRuns: 500 },
    );
  });
});
