/**
 * Microversions as OpenStack's microversion_parse library defines them:
 * `OpenStack-API-Version: <service> X.Y` (several services may be folded into one
 * header, comma separated; the last matching entry wins), `latest` = the maximum,
 * absent = the minimum. A malformed value is a TypeError-class failure (400), an
 * out-of-range one a ValueError-class failure (406).
 */

export interface Version {
  readonly major: number;
  readonly minor: number;
}

export class MicroversionFormatError extends Error {}
export class MicroversionRangeError extends Error {}

export function parseVersionString(s: string): Version {
  // Python: Version(*(int(v) for v in s.split('.', 1))) — int() tolerates
  // surrounding whitespace and a sign, rejects anything else.
  const parts = s.split('.');
  const pyInt = (v: string): number => {
    const t = v.trim();
    if (!/^[+-]?\d+$/.test(t)) throw new MicroversionFormatError(`invalid version string: ${s}`);
    return Number.parseInt(t, 10);
  };
  if (parts.length !== 2) {
    // split('.', 1) yields one part (missing arg) or a second part containing a
    // dot (int() fails): both are malformed.
    throw new MicroversionFormatError(`invalid version string: ${s}`);
  }
  return { major: pyInt(parts[0]!), minor: pyInt(parts[1]!) };
}

export function versionString(v: Version): string {
  return `${v.major}.${v.minor}`;
}

export function compare(a: Version, b: Version): number {
  return a.major !== b.major ? a.major - b.major : a.minor - b.minor;
}

/** Pull the requested version for `service` out of lowercased request headers. */
export function headerVersion(headers: Record<string, string | undefined>, service: string, legacyHeaders: string[] = []): string | undefined {
  const std = headers['openstack-api-version'];
  if (std !== undefined) {
    const entries = std.split(',').reverse();
    for (const entry of entries) {
      const m = entry.trim().split(/\s+/);
      if (m.length < 2) continue;
      const [svc, ...rest] = m;
      if (svc!.toLowerCase() === service.toLowerCase()) return rest.join(' ').trim();
    }
  }
  for (const h of legacyHeaders) {
    const v = headers[h.toLowerCase()];
    if (v !== undefined) return v.split(',').at(-1)!.trim();
  }
  return undefined;
}

export class VersionRange {
  readonly min: Version;
  readonly max: Version;
  constructor(
    readonly service: string,
    min: string,
    max: string,
    readonly legacyHeaders: string[] = [],
  ) {
    this.min = parseVersionString(min);
    this.max = parseVersionString(max);
  }

  /** Resolve the version of a request; throws MicroversionFormatError / MicroversionRangeError. */
  extract(headers: Record<string, string | undefined>): Version {
    const found = headerVersion(headers, this.service, this.legacyHeaders);
    let s = found || versionString(this.min);
    if (s === 'latest') s = versionString(this.max);
    const v = parseVersionString(s);
    if (compare(v, this.min) < 0 || compare(v, this.max) > 0 || v.minor < 0 || v.major < 0) {
      throw new MicroversionRangeError(`Unacceptable version header: ${s}`);
    }
    return v;
  }
}

/** A request's version with the comparisons handlers need. */
export class RequestVersion implements Version {
  constructor(
    readonly major: number,
    readonly minor: number,
  ) {}
  static of(v: Version): RequestVersion {
    return new RequestVersion(v.major, v.minor);
  }
  /** true when this version >= major.minor */
  atLeast(major: number, minor: number): boolean {
    return compare(this, { major, minor }) >= 0;
  }
  below(major: number, minor: number): boolean {
    return !this.atLeast(major, minor);
  }
  toString(): string {
    return versionString(this);
  }
}
