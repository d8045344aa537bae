/**
 * `npm run event-schemas`: writes the change feed's JSON Schema documents
 * (schemas/events/v1/<detail-type>.json) from schemas/events/shapes.ts. A unit test
 * (test/unit/feed/schemas.test.ts) fails while they are out of date.
 * `--check`: write nothing, exit 1 if a document differs from what would be written.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_SCHEMA_DIR, eventSchemas, renderSchema } from '../schemas/events/shapes.js';
import { commandLine, plainErrors } from './args.js';

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', EVENT_SCHEMA_DIR);
const check = commandLine(process.argv.slice(2), { check: { type: 'boolean' } }, plainErrors()).values.check === true;
let stale = 0;
mkdirSync(OUT, { recursive: true });
for (const [type, schema] of eventSchemas()) {
  const file = join(OUT, `${type}.json`);
  const text = renderSchema(schema);
  const old = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (old === text) continue;
  if (check) {
    stale++;
    process.stdout.write(`[event-schemas] ${type}: OUT OF DATE — run npm run event-schemas\n`);
  } else {
    writeFileSync(file, text);
    process.stdout.write(`[event-schemas] wrote ${file}\n`);
  }
}
process.exit(stale ? 1 : 0);
