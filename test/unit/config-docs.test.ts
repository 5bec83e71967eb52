/**
 * docs/configuration.md is generated from the config schema (scripts/generate-config-docs.ts): regenerating it
 * must give the committed page, so a variable added, renamed or given a new default cannot leave the page stale.
 */
import { readFileSync } from 'node:fs';
import { EnvSchema } from '../../src/runtime/config/index';
import { CONFIG_DOC_PATH, renderConfigurationDoc } from '../../scripts/generate-config-docs';

describe('docs/configuration.md', () => {
  const rendered = renderConfigurationDoc();

  test('is what `npm run docs:config` generates from the schema today', () => {
    const committed = readFileSync(CONFIG_DOC_PATH, 'utf8');
    // On failure: run `npm run docs:config` and commit docs/configuration.md.
    expect(committed).toBe(rendered);
  });

  test('lists every variable of the schema, none under "Other"', () => {
    for (const key of Object.keys(EnvSchema.shape)) expect(rendered).toMatch(new RegExp(`^\\| \`${key}\` +\\|`, 'm'));
    expect(rendered).not.toContain('## Other');
  });

  test("shows each variable's default as the schema has it", () => {
    const row = (key: string) => rendered.split('\n').find((line) => line.startsWith(`| \`${key}\``)) ?? '';
    const cells = (key: string) =>
      row(key)
        .split('|')
        .map((c) => c.trim());
    expect(cells('SUPPLIER_MAX_CONNECTIONS')[2]).toBe('`64`');
    expect(cells('RECONCILIATION_LOOKBACK_MINUTES')[2]).toBe('`1440`');
    expect(cells('LOG_LEVEL').slice(2, 4)).toEqual(['`INFO`', '`TRACE` `DEBUG` `INFO` `WARN` `ERROR`']);
    expect(cells('SUPPLIER_TOKEN')[2]).toBe('—');
  });
});
