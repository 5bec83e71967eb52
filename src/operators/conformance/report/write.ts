/** Writes a run's report.json, report.md and junit.xml into one folder. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ConformanceReport } from '../run';
import { renderJUnit } from './junit';
import { renderMarkdown } from './markdown';

export async function writeReport(report: ConformanceReport, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files = {
    'report.json': `${JSON.stringify(report, null, 2)}\n`,
    'report.md': renderMarkdown(report),
    'junit.xml': renderJUnit(report),
  };
  const written: string[] = [];
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(dir, name);
    await writeFile(file, text);
    written.push(file);
  }
  return written;
}
