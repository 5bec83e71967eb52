/**
 * Which build a worker is: Temporal's Worker Deployment Versioning names it by a deployment (the fleet, one per
 * task queue and namespace) and a build id. Two builds of one deployment poll side by side; the server sends a
 * pinned run's tasks only to the build it started on, and new runs to the build set current (src/operators/deploy/routing.ts).
 *
 * The build id is the package version and the commit (`1.0.0+9cbc003`): a person reading the Web UI or the console
 * sees which release and which commit a run is on. It must change whenever the workflow code does; a tree with
 * uncommitted changes gets `.dirty`, so two different trees never share an id by accident.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface WorkerBuild {
  deploymentName: string;
  buildId: string;
}

/** Letters, digits and `-_+` only: the server reads `<deployment>.<build>` in older APIs, so no dots in a name. */
export const DEPLOYMENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
/** A build id may carry dots (semver) and `+`; no spaces, no slashes, at most 200 characters. */
export const BUILD_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$/;

/**
 * A worker deployment version as the server writes it (`TemporalWorkerDeploymentVersion`, `<deployment>:<buildId>`),
 * split at the first colon: a deployment name has none (DEPLOYMENT_NAME_PATTERN), a build id may. Anything else
 * (empty, no colon, an empty side) is no version.
 */
export function parseDeploymentVersion(
  version: string | undefined | null,
): { deploymentName: string; buildId: string } | undefined {
  const colon = version?.indexOf(':') ?? -1;
  if (!version || colon <= 0 || colon === version.length - 1) return undefined;
  return { deploymentName: version.slice(0, colon), buildId: version.slice(colon + 1) };
}

/** The package's own version, read from the package.json above this file (src/ or a compiled copy of it). */
export function packageVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'hotel-booking-orchestrator' && pkg.version) return pkg.version;
    }
    if (path.dirname(dir) === dir) return '0.0.0';
  }
}

/**
 * The commit the code was built from: BUILD_COMMIT (an image's build argument), else git's HEAD of the tree this
 * file is in, with `.dirty` when the tree has changes; undefined when neither is there.
 */
export function buildCommit(env: NodeJS.ProcessEnv = process.env, from: string = __dirname): string | undefined {
  if (env.BUILD_COMMIT) return env.BUILD_COMMIT.slice(0, 12);
  try {
    const git = (args: string[]): string =>
      execFileSync('git', args, { cwd: from, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 })
        .toString()
        .trim();
    const head = git(['rev-parse', '--short=7', 'HEAD']);
    // `:(top)src`: the repository's src/, wherever this file runs from (a bare `src` would be src/runtime/config/src here,
    // which never exists, and no build was ever marked dirty). Untracked files count: a new module is a change.
    const dirty = git(['status', '--porcelain', '--', ':(top)src']) !== '';
    return dirty ? `${head}.dirty` : head;
  } catch {
    return undefined;
  }
}

/**
 * The default build id: `<package version>+<commit>`; when no commit is known (an image built without BUILD_COMMIT,
 * no .git in it), `<package version>+code-<hash>` of the code itself, so two images of different code never share
 * an id (the version alone, 1.0.0, once named every such image).
 */
export function defaultBuildId(env: NodeJS.ProcessEnv = process.env, from: string = __dirname): string {
  const commit = buildCommit(env, from);
  // `from` is src/runtime/config (or its compiled copy): the code hashed is all of src/ (lib/).
  return `${packageVersion(from)}+${commit ?? `code-${codeHash(path.resolve(from, '../..'))}`}`;
}

/** A hash of every source or compiled file below `root` (names and contents, in name order), 12 hex digits. */
export function codeHash(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|js|json)$/.test(entry.name)) hash.update(path.relative(root, full)).update(readFileSync(full));
    }
  };
  walk(root);
  return hash.digest('hex').slice(0, 12);
}
