/** UUID helpers matching Python's uuid / oslo.utils behaviour. */
import { createHash, randomUUID } from 'node:crypto';

/** oslo's uuidutils.is_uuid_like: hex with or without dashes, braces or urn prefix. */
export function isUuidLike(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  // uuid.UUID(): drop 'urn:' / 'uuid:', strip braces, drop every dash, need 32 hex digits
  const s = v
    .replaceAll('urn:', '')
    .replaceAll('uuid:', '')
    .replace(/^[{}]+|[{}]+$/g, '')
    .replaceAll('-', '');
  return /^[0-9a-fA-F]{32}$/.test(s);
}

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

/** uuid.uuid5(namespace, name): the name-based (SHA-1) UUID, as Python computes it. */
export function uuid5(namespace: string, name: string): string {
  const ns = Buffer.from(canonicalUuid(namespace).replaceAll('-', ''), 'hex');
  const hash = createHash('sha1').update(ns).update(Buffer.from(name, 'utf8')).digest();
  const b = hash.subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  return canonicalUuid(b.toString('hex'));
}
