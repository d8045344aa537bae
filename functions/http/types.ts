/** The transport-neutral request/response both APIs are written against. */

export interface HttpRequest {
  method: string;
  /** path without the stage / mount prefix, always starting with '/' */
  path: string;
  rawQuery: string;
  /** lowercased header names; repeated headers folded with ',' */
  headers: Record<string, string>;
  /** decoded body text, undefined when the request had none */
  body?: string;
  /** set when the body bytes are not valid UTF-8 (body then holds a lossy decoding) */
  bodyError?: string;
  /** scheme://host used to build absolute links and Location headers */
  baseUrl: string;
  requestId: string;
  /** identity asserted by an API Gateway authorizer (AWS), if any */
  authorizer?: Record<string, unknown>;
  sourceIp?: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

export type QueryPairs = Array<[string, string]>;

class QueryDecodeError extends Error {}
export { QueryDecodeError };

function decodeComponent(s: string): string {
  const bytes: number[] = [];
  const plus = s.replace(/\+/g, ' ');
  for (let i = 0; i < plus.length; i++) {
    const c = plus[i]!;
    if (c === '%' && /^[0-9a-fA-F]{2}$/.test(plus.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(plus.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      for (const b of Buffer.from(c, 'utf8')) bytes.push(b);
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    throw new QueryDecodeError('query string is not valid UTF-8');
  }
}

/** urllib.parse.parse_qsl(keep_blank_values=True), the parser behind webob's req.GET. */
export function parseQuery(raw: string): QueryPairs {
  const out: QueryPairs = [];
  if (!raw) return out;
  for (const part of raw.split(/[&;]/)) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const k = eq < 0 ? part : part.slice(0, eq);
    const v = eq < 0 ? '' : part.slice(eq + 1);
    out.push([decodeComponent(k), decodeComponent(v)]);
  }
  return out;
}

/** A multi-dict over query pairs (webob.MultiDict semantics). */
export class Query {
  constructor(readonly pairs: QueryPairs) {}
  static parse(raw: string): Query {
    return new Query(parseQuery(raw));
  }
  has(k: string): boolean {
    return this.pairs.some(([key]) => key === k);
  }
  /** last value, like dict(req.GET)[k] */
  get(k: string): string | undefined {
    let v: string | undefined;
    for (const [key, val] of this.pairs) if (key === k) v = val;
    return v;
  }
  getAll(k: string): string[] {
    return this.pairs.filter(([key]) => key === k).map(([, v]) => v);
  }
  keys(): string[] {
    return [...new Set(this.pairs.map(([k]) => k))];
  }
  /** dict(req.GET): one value per key (the last) */
  toDict(): Record<string, string> {
    const d: Record<string, string> = {};
    for (const [k, v] of this.pairs) d[k] = v;
    return d;
  }
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

export function noContent(headers: Record<string, string> = {}): HttpResponse {
  return { status: 204, headers: { ...headers } };
}
