/** UUID helpers matching Python's uuid / oslo.utils behaviour. */
import { randomUUID } from 'node:crypto';
import { isUuidLike } from './jsonschema.js';

export { isUuidLike };

/** str(uuid.UUID(value)): canonical lowercase 8-4-4-4-12 form. */
export function canonicalUuid(v: string): string {
  const hex = v
    .replaceAll('urn:', '')
    .replaceAll('uuid:', '')
    .replace(/^[{}]+|[{}]+$/g, '')
    .replaceAll('-', '')
    .toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error(`badly formed hexadecimal UUID string: ${v}`);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const newUuid = (): string => randomUUID();
