/**
 * A fingerprint of each workflow type's code: every module its entry reaches by relative imports, compiled to
 * JavaScript without comments and types, hashed without the folders they stand in. A comment or type change keeps the fingerprint; anything that
 * may change the commands a workflow sends changes it. The replay tier compares it with the fingerprint written
 * beside a type's newest recorded histories (test/replay/histories/<type>/<version>/recorded.json), so code
 * that changed since its histories were recorded fails until they are recorded again (`npm run record-histories`),
 * which refuses to overwrite histories the new code cannot replay.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(__dirname, '../..');

/** Every workflow type the worker registers, by the folder its histories live in (test/replay/histories/<folder>). */
export const WORKFLOW_TYPES = {
  booking: { type: 'bookingWorkflow', entry: 'src/workflows/booking/index.ts' },
  order: { type: 'orderWorkflow', entry: 'src/workflows/order/index.ts' },
  sweep: { type: 'reconciliationSweepWorkflow', entry: 'src/workflows/sweep/index.ts' },
  note: { type: 'operatorNoteWorkflow', entry: 'src/workflows/note/index.ts' },
  gate: { type: 'deployGateWorkflow', entry: 'src/workflows/gate/index.ts' },
} as const;
export type WorkflowFolder = keyof typeof WORKFLOW_TYPES;

/** Version folders in the order they were made: v9 before v10 (a plain string sort puts v10 first). */
export const byVersion = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** The files a workflow's entry reaches (relative imports, type-only ones left out), repo-relative and sorted. */
export function workflowModules(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(path.join(root, file), 'utf8');
    const imports = /^\s*(import|export)\s+(?!type\s)[^'";]*?from\s+'(\.[^']+)'/gm;
    for (const match of source.matchAll(imports)) visit(resolve(path.dirname(file), match[2]!));
  };
  visit(entry);
  return [...seen].sort();
}

function resolve(dir: string, specifier: string): string {
  const base = path.join(dir, specifier);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) {
    if (existsSync(path.join(root, candidate))) return candidate;
  }
  throw new Error(`cannot resolve ${specifier} from ${dir}`);
}

export function workflowFingerprint(folder: WorkflowFolder): string {
  // A module is hashed by its compiled text alone, with each relative import cut to its file's name, and the
  // modules in the order of their own hashes: moving a file to another folder keeps the fingerprint (a move
  // changes no command), while any change to what a module does, or which modules are reached, changes it.
  const modules = workflowModules(WORKFLOW_TYPES[folder].entry).map((file) => {
    const { outputText } = ts.transpileModule(readFileSync(path.join(root, file), 'utf8'), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, removeComments: true },
    });
    const placeless = outputText.replace(
      /require\("(\.[^"]*)"\)/g,
      (_, spec: string) => `require("${path.basename(spec)}")`,
    );
    return createHash('sha256')
      .update(`${path.basename(file)}\n${placeless}`)
      .digest('hex');
  });
  const hash = createHash('sha256');
  for (const module of modules.sort()) hash.update(`${module}\n`);
  return hash.digest('hex').slice(0, 16);
}

/**
 * The version folders (`<type>/<version>`) a newer folder of their type lists as left to their build (recorded with
 * `--new-build`): their runs are pinned to the builds that made them, so the current code never continues them and
 * the replay tier leaves them, and the fixtures of their shape, out (docs/testing.md).
 */
export function foldersLeftToTheirBuild(histories: string = path.join(__dirname, 'histories')): Set<string> {
  const left = new Set<string>();
  for (const folder of Object.keys(WORKFLOW_TYPES)) {
    const dir = path.join(histories, folder);
    if (!existsSync(dir)) continue;
    for (const version of readdirSync(dir)) {
      const recorded = path.join(dir, version, 'recorded.json');
      if (!existsSync(recorded)) continue;
      const { leftToTheirBuild = [] } = JSON.parse(readFileSync(recorded, 'utf8')) as { leftToTheirBuild?: string[] };
      for (const older of leftToTheirBuild) left.add(`${folder}/${older}`);
    }
  }
  return left;
}
