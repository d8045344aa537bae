/**
 * Placement's microversions: the range Berth serves (one list for the version
 * document, negotiation and error bodies) and the versions at which the framework's
 * own behaviour changes. A handler's version-dependent rules stay next to the handler.
 */
import { VersionRange } from '../../core/microversion.js';

export const MIN_VERSION = '1.0';
export const MAX_VERSION = '1.39';
export const PLACEMENT_VERSIONS = new VersionRange('placement', MIN_VERSION, MAX_VERSION);

/** error bodies carry a `code` from 1.23 */
export const ERROR_CODES_SINCE = { major: 1, minor: 23 } as const;
/** GET answers carry cache-control and last-modified from 1.15 */
export const CACHE_HEADERS_SINCE = { major: 1, minor: 15 } as const;

export function reaches(v: { major: number; minor: number }, since: { major: number; minor: number }): boolean {
  return v.major > since.major || (v.major === since.major && v.minor >= since.minor);
}
