/**
 * Python floats in JSON bodies. Placement is Python: a float column (allocation_ratio)
 * comes out of json.dumps as float.__repr__ prints it — `1.0`, `16.0`, `3.3333`,
 * `1e-05`, `1e+16` — where JSON.stringify prints `1`, `16`, `0.00001`,
 * `10000000000000000`. Python clients do not notice; a strictly typed one may.
 *
 * - pyFloatRepr(n): float.__repr__ (shortest round-trip digits, as JS; fixed notation
 *   for decimal exponents -4..15 with at least one decimal, else d.ddde±XX);
 * - PyFloat: a number a view wants printed as a Python float;
 * - pyJson(v): compact JSON like JSON.stringify, PyFloat printed by pyFloatRepr;
 * - jsonNumberLiterals / floatLiteralPaths(text): the number literals of a JSON text
 *   and which of them Python parses as floats (`2.0`, `1e3`), so an echo of the
 *   client's own value keeps the type upstream parsed (it serialises that value).
 */

export function pyFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const [mantissa, e] = n.toExponential().split('e') as [string, string];
  const exp = Number(e);
  if (exp < -4 || exp >= 16) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  // JS prints fixed notation for 1e-7 <= |n| < 1e21 with the same shortest digits
  const fixed = String(n);
  return fixed.includes('.') ? fixed : `${fixed}.0`;
}

/** A number printed as a Python float by pyJson (JSON.stringify prints the plain number). */
export class PyFloat {
  constructor(readonly value: number) {}
  toJSON(): number {
    return this.value;
  }
}

export const pyFloat = (n: number) => new PyFloat(n);

/** JSON.stringify's compact output, with PyFloat values printed as Python prints floats. */
export function pyJson(v: unknown): string {
  if (v instanceof PyFloat) return pyFloatRepr(v.value);
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined || typeof x === 'function' ? 'null' : pyJson(x))).join(',')}]`;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return pyJson((v as { toJSON(): unknown }).toJSON());
  const parts: string[] = [];
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (x === undefined || typeof x === 'function') continue;
    parts.push(`${JSON.stringify(k)}:${pyJson(x)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * Every number literal of a JSON text, by path (keys joined by '/', array indices as
 * numbers), as written: what a Python client parses it as (`2` an int, `2.0` a
 * float) and what a byte-for-byte comparison of two answers sees. Duplicate keys: the
 * last one counts (as in both parsers). Text that is not JSON yields whatever was seen
 * before the error (callers parse it properly first).
 */
export function jsonNumberLiterals(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return text.slice(start + 1, i - 1);
    }
  };
  const forget = (p: string) => {
    out.delete(p);
    for (const q of [...out.keys()]) if (q.startsWith(`${p}/`)) out.delete(q);
  };
  const value = (path: string): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      while (i < text.length) {
        ws();
        const key = str();
        ws();
        i++; // ':'
        const p = path ? `${path}/${key}` : key;
        forget(p);
        value(p);
        ws();
        if (text[i] === ',') i++;
        else {
          i++;
          return;
        }
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let k = 0; i < text.length; k++) {
        value(path ? `${path}/${k}` : String(k));
        ws();
        if (text[i] === ',') i++;
        else {
          i++;
          return;
        }
      }
    } else if (c === '"') str();
    else {
      const start = i;
      while (i < text.length && !',]} \t\n\r'.includes(text[i]!)) i++;
      const lit = text.slice(start, i);
      if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(lit)) out.set(path, lit);
    }
  };
  value('');
  return out;
}

/** The paths of the number literals Python parses as floats: a fraction or an exponent. */
export function floatLiteralPaths(text: string): Set<string> {
  const out = new Set<string>();
  for (const [p, lit] of jsonNumberLiterals(text)) if (/[.eE]/.test(lit)) out.add(p);
  return out;
}
