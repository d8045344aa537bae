/**
 * The expressions of one write (a Put, an Update, a Delete or a ConditionCheck of a
 * transaction): placeholders for attribute names and values, the clauses of an update
 * expression, and a condition — so no store module writes `#c${i}` / `:d${i}` by hand.
 *
 *   const e = new Expr();
 *   e.set('updated', now).add('gen', 1).setTo(['used', rc], `${e.ifNotExists(['used', rc], 0)} + ${e.v(d)}`);
 *   e.when(e.exists('pk')).when(`${e.n('gen')} = ${e.v(read)}`);
 *   items.push(e.updateItem(K.providerState(uuid)));
 *
 * The conditions (exists, absent, eq, lt, atMost, contains, or) return text to give
 * when(); a condition they do not cover is written with n() and v(). updateInput() and
 * putInput() make the same write as one UpdateItem / PutItem call outside a transaction.
 *
 * A name that is a plain identifier keeps it (`#gen`); any other (a resource class, a
 * usage counter `n:INSTANCE`) gets a numbered one. A path is an attribute name or a list
 * of them (a map's member: `['used', 'VCPU']` → `#used.#n0`).
 */
import type { PutCommandInput, UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TxItem } from './commit.js';
import { tableName } from './client.js';

type Path = string | readonly string[];
type Key = Record<string, unknown>;

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** a Put of a new item: refused (its condition fails) when an item with its key exists */
export function newItem(item: Record<string, unknown>): TxItem {
  const e = new Expr();
  return e.when(e.absent('pk')).putItem(item);
}

/** `c` without parentheses around the whole of it, if it has them */
function unwrapped(c: string): string {
  if (!c.startsWith('(')) return c;
  let depth = 0;
  for (let i = 0; i < c.length; i++) {
    if (c[i] === '(') depth++;
    else if (c[i] === ')' && --depth === 0) return i === c.length - 1 ? unwrapped(c.slice(1, -1)) : c;
  }
  return c;
}

export class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private readonly byName = new Map<string, string>();
  private valueCount = 0;
  private readonly clauses: Record<'SET' | 'ADD' | 'REMOVE' | 'DELETE', string[]> = { SET: [], ADD: [], REMOVE: [], DELETE: [] };
  private readonly conditions: string[] = [];
  private returnOld = false;

  /** the placeholder of an attribute path */
  n(path: Path): string {
    return (typeof path === 'string' ? [path] : path)
      .map((attr) => {
        let p = this.byName.get(attr);
        if (!p) {
          p = PLAIN.test(attr) && !(`#${attr}` in this.names) ? `#${attr}` : `#n${this.byName.size}`;
          this.byName.set(attr, p);
          this.names[p] = attr;
        }
        return p;
      })
      .join('.');
  }

  /** the placeholder of a value */
  v(value: unknown): string {
    const p = `:v${this.valueCount++}`;
    this.values[p] = value;
    return p;
  }

  /** SET path = value */
  set(path: Path, value: unknown): this {
    return this.setTo(path, this.v(value));
  }

  /** SET path = <an expression made with n() and v()> */
  setTo(path: Path, expression: string): this {
    this.clauses.SET.push(`${this.n(path)} = ${expression}`);
    return this;
  }

  /** ADD path value (a number added, or a set's members) */
  add(path: Path, value: unknown): this {
    this.clauses.ADD.push(`${this.n(path)} ${this.v(value)}`);
    return this;
  }

  /** REMOVE path */
  remove(path: Path): this {
    this.clauses.REMOVE.push(this.n(path));
    return this;
  }

  /** DELETE path members (from a set) */
  delete(path: Path, members: unknown): this {
    this.clauses.DELETE.push(`${this.n(path)} ${this.v(members)}`);
    return this;
  }

  /** SET path = path + by (the attribute must be there: unlike ADD, a missing one is an error, not 0) */
  increment(path: Path, by = 1): this {
    return this.setTo(path, `${this.n(path)} + ${this.v(by)}`);
  }

  /** the operand `if_not_exists(path, fallback)`: the attribute, or `fallback` while it is missing (for setTo) */
  ifNotExists(path: Path, fallback: unknown): string {
    return `if_not_exists(${this.n(path)}, ${this.v(fallback)})`;
  }

  /** AND this to the condition */
  when(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /** a failed condition returns the item as it was (ReturnValuesOnConditionCheckFailure ALL_OLD) */
  returningOldOnFailure(): this {
    this.returnOld = true;
    return this;
  }

  exists(path: Path): string {
    return `attribute_exists(${this.n(path)})`;
  }

  absent(path: Path): string {
    return `attribute_not_exists(${this.n(path)})`;
  }

  /** path = value */
  eq(path: Path, value: unknown): string {
    return `${this.n(path)} = ${this.v(value)}`;
  }

  /** path < value */
  lt(path: Path, value: unknown): string {
    return `${this.n(path)} < ${this.v(value)}`;
  }

  /** path (a list or a set, or a string) holds value */
  contains(path: Path, value: unknown): string {
    return `contains(${this.n(path)}, ${this.v(value)})`;
  }

  /** any of these conditions (parenthesised, to AND with others; a condition of it alone loses them: parts()) */
  or(...conditions: string[]): string {
    return `(${conditions.join(' OR ')})`;
  }

  /** path absent or <= limit */
  atMost(path: Path, limit: number): string {
    return `(${this.absent(path)} OR ${this.n(path)} <= ${this.v(limit)})`;
  }

  /** the update expression of the clauses so far ('' when none) */
  get updateExpression(): string {
    return (['SET', 'ADD', 'REMOVE', 'DELETE'] as const)
      .filter((c) => this.clauses[c].length)
      .map((c) => `${c} ${this.clauses[c].join(', ')}`)
      .join(' ');
  }

  get hasUpdates(): boolean {
    return this.updateExpression !== '';
  }

  /**
   * ConditionExpression, ExpressionAttributeNames and ExpressionAttributeValues, each when
   * there is any. A lone parenthesised condition (an or(), an atMost()) goes without its
   * parentheses: DynamoDB refuses redundant ones, and tx.ts puts every condition in
   * parentheses of its own to AND the lock guard to it.
   */
  private parts(): Record<string, unknown> {
    const cond = this.conditions.length === 1 ? unwrapped(this.conditions[0]!) : this.conditions.join(' AND ');
    return {
      ...(cond ? { ConditionExpression: cond } : {}),
      ...(Object.keys(this.names).length ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length ? { ExpressionAttributeValues: this.values } : {}),
      ...(this.returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } : {}),
    };
  }

  /** an Update action of `key` with these clauses and condition */
  updateItem(key: Key): TxItem {
    return { Update: this.updateInput(key) } as TxItem;
  }

  /** the same, as the input of one UpdateItem call (UpdateCommand) */
  updateInput(key: Key): UpdateCommandInput {
    return { TableName: tableName(), Key: key, UpdateExpression: this.updateExpression, ...this.parts() } as UpdateCommandInput;
  }

  /** a Put action of `item` under this condition */
  putItem(item: Key): TxItem {
    return { Put: { TableName: tableName(), Item: item, ...this.parts() } } as TxItem;
  }

  /** the same, as the input of one PutItem call (PutCommand) */
  putInput(item: Key): PutCommandInput {
    return { TableName: tableName(), Item: item, ...this.parts() } as PutCommandInput;
  }

  /** a Delete action of `key` under this condition */
  deleteItem(key: Key): TxItem {
    return { Delete: { TableName: tableName(), Key: key, ...this.parts() } } as TxItem;
  }

  /** a ConditionCheck action of `key` */
  checkItem(key: Key): TxItem {
    return { ConditionCheck: { TableName: tableName(), Key: key, ...this.parts() } } as TxItem;
  }
}
