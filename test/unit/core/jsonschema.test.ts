import { describe, expect, it } from 'vitest';
import { validate, SchemaValidationError } from '../../../functions/core/compat/jsonschema.js';
import { isUuidLike } from '../../../functions/core/compat/uuid.js';
import { jsonSchemaOf } from '../../../schemas/json-schema.js';
import * as S from '../../../schemas/placement/resource-providers.js';

function message(data: unknown, schema: unknown): string {
  try {
    validate(data, schema as never);
  } catch (e) {
    expect(e).toBeInstanceOf(SchemaValidationError);
    return (e as Error).message;
  }
  return 'valid';
}

describe('JSON Schema validation with Python jsonschema messages', () => {
  const create = jsonSchemaOf(S.createProviderV1_14);
  it('accepts valid data', () => {
    expect(message({ name: 'cn1', uuid: 'c2a5b9b5-12a4-4b5c-9ab1-8d0c8f0f6e7c', parent_provider_uuid: null }, create)).toBe('valid');
  });
  it('reports a missing property', () => {
    expect(message({}, create)).toMatch(/^'name' is a required property\n\nFailed validating 'required' in schema:/);
  });
  it('reports additional properties in sorted order', () => {
    expect(message({ name: 'x', zed: 1, bad_field: 2 }, create)).toMatch(
      /^Additional properties are not allowed \('bad_field', 'zed' were unexpected\)/,
    );
  });
  it('reports nested failures with their schema and instance paths', () => {
    const m = message({ name: 'a'.repeat(201) }, create);
    expect(m).toContain('is too long');
    expect(m).toContain("Failed validating 'maxLength' in schema['properties']['name']");
    expect(m).toContain("On instance['name']");
  });
  it('prefers the shallowest error (best_match)', () => {
    expect(message({ uuid: 'nope' }, create)).toMatch(/^'name' is a required property/);
  });
  it('checks dependencies (draft 4-7): a present property needs the ones it names', () => {
    const schema = { type: 'object', dependencies: { physical_disks: ['controller'], b: { required: ['c'] } } };
    expect(message({ physical_disks: [] }, schema)).toMatch(/^'controller' is a dependency of 'physical_disks'/);
    expect(message({ physical_disks: [], controller: 'x' }, schema)).toBe('valid');
    expect(message({ b: 1 }, schema)).toMatch(/^'c' is a required property/);
    expect(message({ controller: 'x' }, schema)).toBe('valid');
  });
  it('describes anyOf failures', () => {
    expect(message({ name: 'x', parent_provider_uuid: 5 }, create)).toMatch(/^5 is not valid under any of the given schemas/);
  });
  it('renders values like Python repr', () => {
    expect(message({ name: 'x', uuid: "it's" }, create)).toMatch(/^"it's" is not a 'uuid'/);
    expect(message({ name: true }, create)).toMatch(/^True is not of type 'string'/);
  });
  it('checks uniqueItems, minimum, maximum and patterns', () => {
    expect(message([1, 1], { type: 'array', uniqueItems: true })).toMatch(/^\[1, 1\] has non-unique elements/);
    expect(message(0, { type: 'integer', minimum: 1 })).toMatch(/^0 is less than the minimum of 1/);
    expect(message(5, { type: 'integer', maximum: 4 })).toMatch(/^5 is greater than the maximum of 4/);
    expect(message('instance', { type: 'string', pattern: '^[A-Z0-9_]+$' })).toMatch(/^'instance' does not match '\^\[A-Z0-9_\]\+\$'/);
  });
  it('counts code points like Python', () => {
    expect(message('😀😀', { type: 'string', maxLength: 2 })).toBe('valid');
  });
  it('knows oslo uuid-likeness', () => {
    expect(isUuidLike('c2a5b9b512a44b5c9ab18d0c8f0f6e7c')).toBe(true);
    expect(isUuidLike('{c2a5b9b5-12a4-4b5c-9ab1-8d0c8f0f6e7c}')).toBe(true);
    expect(isUuidLike('c2a5b9b5-12a4-4b5c-9ab1-8d0c8f0f6e7')).toBe(false);
    expect(isUuidLike('not-a-uuid')).toBe(false);
  });
});
