/**
 * What a TransactWriteItems action leaves an item as, computed here as DynamoDB would:
 * readers of an item a committed change larger than one transaction has locked but not
 * yet written see the item as the change leaves it (intents/views.ts), without writing anything
 * themselves. Covers the update expressions the store writes (tested against DynamoDB
 * Local): SET of a value, a path, `if_not_exists(path, value)` and `a + b` / `a - b`
 * (nested map paths included); ADD of a number or a set; DELETE from a set; REMOVE.
 * Operands are evaluated against the item before the update, as DynamoDB does.
 */
import type { Item } from './client.js';

type Action = {
  Item?: Item;
  Key?: Item;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
};

export class UnsupportedExpression extends Error {}

/** split at top-level commas (not inside parentheses) */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let at = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(s.slice(at, i).trim());
      at = i + 1;
    }
  }
  const last = s.slice(at).trim();
  if (last) out.push(last);
  return out;
}

/** the clauses of an update expression: SET / REMOVE / ADD / DELETE, each with its comma-separated parts */
function clauses(expr: string): Array<[string, string[]]> {
  const re = /\b(SET|REMOVE|ADD|DELETE)\b/gi;
  const marks: Array<[string, number, number]> = [];
  for (let m = re.exec(expr); m; m = re.exec(expr)) marks.push([m[1]!.toUpperCase(), m.index, m.index + m[0].length]);
  return marks.map(([kw, , end], i) => [kw, splitTop(expr.slice(end, i + 1 < marks.length ? marks[i + 1]![1] : expr.length))]);
}

function clone<T>(v: T): T {
  if (v instanceof Set) return new Set(v) as T;
  if (Array.isArray(v)) return v.map(clone) as T;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)])) as T;
  return v;
}

/**
 * The item `action` (an Update's, a Put's) leaves `before` as. `before` undefined: the
 * item did not exist (an Update creates it from its key).
 */
export function updatedItem(before: Item | undefined, action: Action): Item {
  if (action.Item) return clone(action.Item);
  const names = action.ExpressionAttributeNames ?? {};
  const values = action.ExpressionAttributeValues ?? {};
  const old = clone(before ?? { ...action.Key });
  const next = clone(old);
  const pathOf = (p: string): string[] =>
    p
      .trim()
      .split('.')
      .map((part) => {
        const n = part.trim();
        if (n.startsWith('#')) {
          if (!(n in names)) throw new UnsupportedExpression(`unknown name ${n}`);
          return names[n]!;
        }
        if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(n)) return n;
        throw new UnsupportedExpression(`path ${p}`);
      });
  const get = (item: Item, path: string[]): unknown =>
    path.reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Item)[k] : undefined), item);
  const set = (item: Item, path: string[], v: unknown) => {
    let o = item;
    for (const k of path.slice(0, -1)) {
      if (!o[k] || typeof o[k] !== 'object') throw new UnsupportedExpression(`the document path ${path.join('.')} is not there`);
      o = o[k];
    }
    if (v === undefined) delete o[path[path.length - 1]!];
    else o[path[path.length - 1]!] = v;
  };
  const operand = (s: string): unknown => {
    const t = s.trim();
    const arith = splitArith(t);
    if (arith) {
      const [a, op, b] = arith;
      const x = operand(a);
      const y = operand(b);
      if (typeof x !== 'number' || typeof y !== 'number') throw new UnsupportedExpression(`arithmetic on ${t}`);
      return op === '+' ? x + y : x - y;
    }
    const ine = /^if_not_exists\s*\((.*)\)$/i.exec(t);
    if (ine) {
      const [p, v] = splitTop(ine[1]!);
      const cur = get(old, pathOf(p!));
      return cur === undefined ? operand(v!) : clone(cur);
    }
    if (t.startsWith(':')) {
      if (!(t in values)) throw new UnsupportedExpression(`unknown value ${t}`);
      return clone(values[t]);
    }
    return clone(get(old, pathOf(t)));
  };
  for (const [kw, parts] of clauses(action.UpdateExpression ?? '')) {
    for (const part of parts) {
      if (kw === 'SET') {
        const eq = part.indexOf('=');
        set(next, pathOf(part.slice(0, eq)), operand(part.slice(eq + 1)));
      } else if (kw === 'REMOVE') {
        set(next, pathOf(part), undefined);
      } else {
        const [p, v] = part.split(/\s+/);
        const path = pathOf(p!);
        const by = values[v!];
        const cur = get(next, path);
        if (kw === 'ADD') {
          if (typeof by === 'number') set(next, path, (typeof cur === 'number' ? cur : 0) + by);
          else if (by instanceof Set) set(next, path, new Set([...((cur as Set<unknown>) ?? []), ...by]));
          else throw new UnsupportedExpression(`ADD of ${typeof by}`);
        } else {
          if (!(by instanceof Set)) throw new UnsupportedExpression('DELETE of a non-set');
          if (cur instanceof Set) {
            const left = new Set([...cur].filter((x) => !by.has(x)));
            set(next, path, left.size ? left : undefined);
          }
        }
      }
    }
  }
  return next;
}

/** `a + b` / `a - b` at the top level of an operand (outside parentheses), or undefined */
function splitArith(s: string): [string, '+' | '-', string] | undefined {
  let depth = 0;
  for (let i = s.length - 1; i > 0; i--) {
    const c = s[i];
    if (c === ')') depth++;
    else if (c === '(') depth--;
    else if ((c === '+' || c === '-') && depth === 0) return [s.slice(0, i), c, s.slice(i + 1)];
  }
  return undefined;
}
