/**
 * JSON Patch (RFC 6902) the way Ironic applies it: the document is validated against
 * args.patch, fields outside an allow-list are refused, adding a new root attribute
 * is refused, and each operation is applied on its own (python-jsonpatch semantics
 * and messages) so the error names the operation that failed.
 */
import { pyRepr } from '../../core/compat/pyrepr.js';
import { validateSchema } from './args.js';
import { Err, IronicError } from '../../core/baremetal/errors.js';
import { PROTOTYPE_KEYS, prototypeKeyMessage } from '../../core/compat/unicode.js';

export interface PatchOp {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

/** ironic.common.args.patch */
export const PATCH_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      path: { type: 'string', pattern: '^(/[\\w-]+)+$' },
      op: { type: 'string', enum: ['add', 'replace', 'remove'] },
      value: {},
    },
    additionalProperties: false,
    required: ['op', 'path'],
  },
} as const;

export function validatePatch(body: unknown): PatchOp[] {
  validateSchema('patch', body, PATCH_SCHEMA as never);
  if (body === null || body === undefined) throw Err.invalid('Missing mandatory parameter: patch');
  for (const p of body as PatchOp[]) {
    // a pointer through "__proto__" would set an object's prototype (the body itself may not hold these keys either)
    const key = p.path.split('/').find((part) => PROTOTYPE_KEYS.includes(part));
    if (key !== undefined) throw Err.invalid(`Invalid patch path ${p.path}: ${prototypeKeyMessage(key)}`);
  }
  return body as PatchOp[];
}

/** api_utils.patch_validate_allowed_fields */
export function patchFields(patch: PatchOp[], allowed: readonly string[]): Set<string> {
  const fields = new Set<string>();
  for (const p of patch) {
    const f = p.path.split('/')[1]!;
    if (!allowed.includes(f)) throw Err.invalid(`Cannot patch ${p.path}. Only the following can be updated: ${allowed.join(', ')}`);
    fields.add(f);
  }
  return fields;
}

/** api_utils.get_patch_values */
export function patchValues(patch: PatchOp[], path: string): unknown[] {
  return patch.filter((p) => p.path === path && p.op !== 'remove').map((p) => p.value);
}

class PatchConflict extends Error {}

function index(part: string, len: number, allowEnd: boolean): number | '-' {
  if (part === '-' && allowEnd) return '-';
  if (!/^(0|[1-9][0-9]*)$/.test(part)) throw new PatchConflict(`'${part}' is not a valid sequence index`);
  const i = Number(part);
  if (!allowEnd && i >= len) throw new PatchConflict(`index '${i}' is out of bounds`);
  return i;
}

/** jsonpointer.to_last: the container of the last part, and the last part */
function toLast(doc: unknown, path: string): { parent: unknown; part: string } {
  const parts = path.split('/').slice(1).map(unescape);
  let cur = doc;
  for (const p of parts.slice(0, -1)) {
    if (Array.isArray(cur)) {
      const i = index(p, cur.length, false) as number;
      cur = cur[i];
    } else if (cur !== null && typeof cur === 'object') {
      if (!Object.hasOwn(cur, p)) throw new PatchConflict(`member '${p}' not found in ${pyRepr(cur)}`);
      cur = (cur as Record<string, unknown>)[p];
    } else {
      throw new PatchConflict(`unable to fully resolve json pointer ${path}, part ${p}`);
    }
  }
  return { parent: cur, part: parts[parts.length - 1]! };
}

function applyOne(doc: Record<string, unknown>, op: PatchOp): void {
  const { parent, part } = toLast(doc, op.path);
  if (op.op === 'remove') {
    if (Array.isArray(parent)) {
      const i = index(part, parent.length, false) as number;
      parent.splice(i, 1);
    } else if (parent !== null && typeof parent === 'object') {
      if (!Object.hasOwn(parent, part)) throw new PatchConflict(`can't remove a non-existent object '${part}'`);
      delete (parent as Record<string, unknown>)[part];
    } else throw new PatchConflict(`unable to fully resolve json pointer ${op.path}, part ${part}`);
    return;
  }
  if (!('value' in op)) throw new PatchConflict("The operation does not contain a 'value' member");
  const value = structuredClone(op.value);
  if (op.op === 'replace') {
    if (part === '-') throw new PatchConflict("'path' with '-' can't be applied to 'replace' operation");
    if (Array.isArray(parent)) {
      const i = /^(0|[1-9][0-9]*)$/.test(part) ? Number(part) : -1;
      if (i < 0 || i >= parent.length) throw new PatchConflict("can't replace outside of list");
      parent[i] = value;
    } else if (parent !== null && typeof parent === 'object') {
      if (!Object.hasOwn(parent, part)) throw new PatchConflict(`can't replace a non-existent object '${part}'`);
      (parent as Record<string, unknown>)[part] = value;
    } else throw new PatchConflict(`unable to fully resolve json pointer ${op.path}, part ${part}`);
    return;
  }
  // add
  if (Array.isArray(parent)) {
    const i = index(part, parent.length, true);
    if (i === '-') parent.push(value);
    else if (i > parent.length) throw new PatchConflict("can't insert outside of list");
    else parent.splice(i, 0, value);
  } else if (parent !== null && typeof parent === 'object') {
    (parent as Record<string, unknown>)[part] = value;
  } else throw new PatchConflict(`unable to fully resolve json pointer ${op.path}, part ${part}`);
}

/** api_utils.apply_jsonpatch */
export function applyPatch<T extends Record<string, unknown>>(doc: T, patch: PatchOp[]): T {
  for (const p of patch) {
    if (p.op === 'add' && p.path.split('/').length === 2 && !Object.hasOwn(doc, p.path.slice(1))) {
      throw Err.invalid(`Adding a new attribute (${p.path}) to the root of the resource is not allowed`);
    }
  }
  const out = structuredClone(doc);
  for (const p of patch) {
    try {
      applyOne(out, p);
    } catch (e) {
      if (e instanceof PatchConflict) throw new IronicError(400, `Couldn't apply patch '${pyRepr(p)}'. Reason: ${e.message}`);
      throw e;
    }
  }
  return out;
}
