/**
 * Accept-header negotiation with WebOb's rules (RFC 7231 specificity, ties broken by
 * the order of the offers), which decide whether an error is rendered as JSON, HTML
 * or plain text, and whether a handler's `application/json` is acceptable at all.
 */

interface Range {
  type: string;
  subtype: string;
  q: number;
  params: string;
}

function parseAccept(header: string): Range[] | undefined {
  const out: Range[] = [];
  for (const part of header.split(',')) {
    const p = part.trim();
    if (!p) continue;
    const [mt, ...rest] = p.split(';').map((x) => x.trim());
    const m = /^([\w.+*-]+)\/([\w.+*-]+)$/.exec(mt!);
    if (!m) return undefined;
    let q = 1;
    const params: string[] = [];
    for (const r of rest) {
      const [k, v] = r.split('=').map((x) => x.trim());
      if (k!.toLowerCase() === 'q') {
        const n = Number(v);
        if (!Number.isFinite(n)) return undefined;
        q = n;
      } else params.push(`${k!.toLowerCase()}=${v}`);
    }
    out.push({ type: m[1]!.toLowerCase(), subtype: m[2]!.toLowerCase(), q, params: params.join(';') });
  }
  return out;
}

/** Acceptable offers in order of preference; undefined header accepts everything. */
export function acceptableOffers(header: string | undefined, offers: string[]): string[] {
  if (header === undefined) return [...offers];
  const ranges = parseAccept(header);
  if (!ranges) return [...offers];
  const scored: Array<{ offer: string; q: number; idx: number }> = [];
  offers.forEach((offer, idx) => {
    const [type, subtype] = offer.toLowerCase().split('/');
    let best: { spec: number; q: number } | undefined;
    for (const r of ranges) {
      let spec = 0;
      if (r.type === type && r.subtype === subtype) spec = r.params ? 4 : 3;
      else if (r.subtype === '*' && r.type === type) spec = 2;
      else if (r.type === '*' && r.subtype === '*') spec = 1;
      else continue;
      if (!best || spec > best.spec) best = { spec, q: r.q };
    }
    if (best && best.q > 0) scored.push({ offer, q: best.q, idx });
  });
  scored.sort((a, b) => b.q - a.q || a.idx - b.idx);
  return scored.map((s) => s.offer);
}
