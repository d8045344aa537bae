import { describe, expect, it } from 'vitest';
import {
  MicroversionFormatError,
  MicroversionRangeError,
  VersionRange,
  headerVersion,
  parseVersionString,
} from '../../../functions/core/microversion.js';

const range = new VersionRange('placement', '1.0', '1.39');

describe('microversion parsing (microversion_parse semantics)', () => {
  it('defaults to the minimum and maps latest to the maximum', () => {
    expect(range.extract({})).toEqual({ major: 1, minor: 0 });
    expect(range.extract({ 'openstack-api-version': 'placement latest' })).toEqual({ major: 1, minor: 39 });
  });
  it('takes the last matching service from a folded header, ignoring other services', () => {
    expect(headerVersion({ 'openstack-api-version': 'compute 2.1, placement 1.5, placement 1.7' }, 'placement')).toBe('1.7');
    expect(range.extract({ 'openstack-api-version': 'compute 2.90' })).toEqual({ major: 1, minor: 0 });
  });
  it('rejects malformed strings as format errors (400) and out-of-range as range errors (406)', () => {
    expect(() => range.extract({ 'openstack-api-version': 'placement pony.horse' })).toThrow(MicroversionFormatError);
    expect(() => range.extract({ 'openstack-api-version': 'placement 1.2.3' })).toThrow('invalid version string: 1.2.3');
    expect(() => range.extract({ 'openstack-api-version': 'placement 0.5' })).toThrow(MicroversionRangeError);
    expect(() => range.extract({ 'openstack-api-version': 'placement 1.40' })).toThrow('Unacceptable version header: 1.40');
  });
  it('tolerates what int() tolerates', () => {
    expect(parseVersionString(' 1 . 05 ')).toEqual({ major: 1, minor: 5 });
  });
});
