/**
 * docs/configuration.md is generated from the config schema (scripts/generate-config-docs.ts): regenerating it
 * must give the committed page, so a variable added, renamed or given a new default cannot leave the page stale.
 */
import { readFileSync } from 'node:fs';
import { EnvSchema } from '../../src/config';
import { CONFIG_DOC_PATH, renderConfigurationDoc } from '../../scripts/generate-config-docs';

describe('docs/configuration.md', () => {
  const rendered = renderConfigurationDoc();

  test('is what `npm run docs:config` generates from the schema today', () => {
    const committed = readFileSync(CONFIG_DOC_PATH, 'utf8');
    // On failure: run `npm run docs:config` and commit docs/configuration.md.
    expect(committed).toBe(rendered);
  });

  test('lists every variable of the schema, none under "Other"', () => {
    for (const key of Object.keys(EnvSchema.shape)) expect(rendered).toContain(`| \`${key}\` |`);
    expect(rendered).not.toContain('## Other');
  });

  test("shows each variable's default as the schema has it", () => {
    expect(rendered).toContain('| `SUPPLIER_MAX_CONNECTIONS` | `64` |');
    expect(rendered).toContain('| `RECONCILIATION_LOOKBACK_MINUTES` | `1440` |');
    expect(rendered).toContain('| `LOG_LEVEL` | `INFO` | `TRACE` `DEBUG` `INFO` `WARN` `ERROR` |');
  });
});
