/**
 * The RAID interface's check of a target RAID configuration (raid.validate_configuration):
 * the schema's best match as "RAID config validation error: …", then at most one root
 * volume. Used by PUT /v1/nodes/{node}/states/raid and GET /v1/nodes/{node}/validate.
 */
import { bestMatch } from '../core/compat/jsonschema.js';
import { iterErrors, type JsonSchema } from '../core/compat/jsonschema-keywords.js';
import { rootVolumeProblem } from '../core/baremetal/interfaces.js';
import { RAID_CONFIG_JSON } from '../../schemas/baremetal/raid.js';

export function raidConfigProblem(config: Record<string, unknown>): string | undefined {
  const best = bestMatch(iterErrors(config, RAID_CONFIG_JSON as JsonSchema));
  if (best) return `RAID config validation error: ${best.message}`;
  return rootVolumeProblem(config);
}
