/**
 * What a Lambda behind API Gateway may answer: the function's response payload (the
 * JSON of the result, body included) is capped at 6 MB, and a binary body travels
 * base64-encoded in it (4/3 larger). So an answer is gzip-compressed when the client
 * accepts it (OpenStack's Python clients send `Accept-Encoding: gzip, deflate`), and an
 * answer that still does not fit is replaced by the API's own error saying how to
 * narrow the request — never a gateway 502, never a truncated body.
 */
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { HttpRequest, HttpResponse } from './types.js';

/** Lambda's synchronous response payload limit (6 MB). */
export const LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024;
/** bodies smaller than this are sent as they are: compressing them saves nothing worth the CPU */
export const COMPRESS_MIN_BYTES = 4096;
/** JSON compresses ~8-15x; a body this many times the limit cannot fit compressed: refuse without trying */
const HOPELESS_RATIO = 16;

/** The API's answer for a response too large to send (its own error format). */
export type TooLarge = (req: HttpRequest, size: { bytes: number; limit: number; compressed: boolean }) => HttpResponse;

/** Does Accept-Encoding allow gzip (explicitly or through `*`, with q > 0)? */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let gzip: number | undefined;
  let star: number | undefined;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().split(';');
    const coding = name.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (coding === 'gzip' || coding === 'x-gzip') gzip = q;
    else if (coding === '*') star = q;
  }
  return (gzip ?? star ?? 0) > 0;
}

/** Bytes of the payload Lambda returns for `result` (what the 6 MB limit applies to). */
export function payloadBytes(result: APIGatewayProxyStructuredResultV2): number {
  return Buffer.byteLength(JSON.stringify(result));
}

/**
 * Does `result` fit `limit`? Exact, but without serialising a body that clearly fits: in
 * the payload's JSON a body character takes at most 6 bytes (`\u001f`), so a body under a
 * sixth of what the rest leaves is answered at once (a 466 KB answer was serialised twice
 * per request only to be measured: 2 ms each).
 */
export function fitsPayload(result: APIGatewayProxyStructuredResultV2, limit: number): boolean {
  if (limit <= 0) return true;
  const body = result.body ?? '';
  const rest = Buffer.byteLength(JSON.stringify({ ...result, body: '' }));
  if (rest + body.length * 6 <= limit) return true;
  return payloadBytes(result) <= limit;
}

function withVary(headers: Record<string, string>, value: string): Record<string, string> {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'vary');
  if (!key) return { ...headers, vary: value };
  const present = headers[key]!.split(',').map((s) => s.trim().toLowerCase());
  return present.includes(value.toLowerCase()) ? headers : { ...headers, [key]: `${headers[key]}, ${value}` };
}

/**
 * The Lambda result for `res`: gzip-compressed when the client accepts it and the body
 * is worth it; replaced by `tooLarge(...)` when it exceeds `limit` (0 = no limit).
 */
export function encodeResult(req: HttpRequest, res: HttpResponse, limit: number, tooLarge: TooLarge): APIGatewayProxyStructuredResultV2 {
  const plain: APIGatewayProxyStructuredResultV2 = { statusCode: res.status, headers: res.headers, body: res.body ?? '', isBase64Encoded: false };
  const body = res.body ?? '';
  const raw = Buffer.byteLength(body);
  const gzip = raw >= COMPRESS_MIN_BYTES && acceptsGzip(req.headers['accept-encoding']) && !res.headers['content-encoding'];
  let result = plain;
  if (gzip && !(limit > 0 && raw > limit * HOPELESS_RATIO)) {
    const compressed = gzipSync(body, { level: 6 });
    result = {
      statusCode: res.status,
      headers: withVary({ ...res.headers, 'content-encoding': 'gzip' }, 'Accept-Encoding'),
      body: compressed.toString('base64'),
      isBase64Encoded: true,
    };
  } else if (raw >= COMPRESS_MIN_BYTES) {
    result = { ...plain, headers: withVary(res.headers, 'Accept-Encoding') };
  }
  if (!fitsPayload(result, limit)) {
    const refused = tooLarge(req, { bytes: raw, limit, compressed: gzip });
    return { statusCode: refused.status, headers: refused.headers, body: refused.body ?? '', isBase64Encoded: false };
  }
  return result;
}

/** Human size for messages: 7.3 MB */
export function mb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
