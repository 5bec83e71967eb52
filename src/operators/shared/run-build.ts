/**
 * Which build a run is on (Worker Deployment Versioning, src/operators/deploy), as the console and the CLI show it. Read from
 * what the server itself records, never from the workflow: a list entry's search attributes
 * (`TemporalWorkerDeploymentVersion` = `<deployment>:<buildId>`, `TemporalWorkflowVersioningBehavior`), or a
 * description's versioning info. A run without a versioning behavior is unversioned (undefined), as the server
 * counts it.
 */
import { defineSearchAttributeKey, SearchAttributeType, type TypedSearchAttributes } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { parseDeploymentVersion } from '../../runtime/config/build';

type VersioningInfo = temporal.api.workflow.v1.IWorkflowExecutionVersioningInfo;
const { VersioningBehavior } = temporal.api.enums.v1;

export interface RunBuild {
  deploymentName: string;
  buildId: string;
  /** pinned: the run stays on this build to its end; auto-upgrade: it moves to the deployment's current build. */
  behavior: 'pinned' | 'auto-upgrade';
}

/** Set by the server on every versioned run: its build as `<deployment>:<buildId>`. */
export const WorkerDeploymentVersionKey = defineSearchAttributeKey(
  'TemporalWorkerDeploymentVersion',
  SearchAttributeType.KEYWORD,
);
/** Set by the server on every versioned run: `Pinned` or `AutoUpgrade`. */
export const VersioningBehaviorKey = defineSearchAttributeKey(
  'TemporalWorkflowVersioningBehavior',
  SearchAttributeType.KEYWORD,
);

/**
 * A list entry (WorkflowExecutionInfo) or a description (WorkflowExecutionDescription): each field optional, so a
 * server that sends less reads as unversioned rather than failing the page.
 */
export interface RunWithVersioning {
  typedSearchAttributes?: Pick<TypedSearchAttributes, 'get'>;
  raw?: {
    versioningInfo?: VersioningInfo | null;
    workflowExecutionInfo?: { versioningInfo?: VersioningInfo | null } | null;
  } | null;
}

/** The run's build, or undefined when it is unversioned. The versioning info wins; the search attributes lag. */
export function runBuildOf(run: RunWithVersioning): RunBuild | undefined {
  const info = run.raw?.workflowExecutionInfo?.versioningInfo ?? run.raw?.versioningInfo;
  return (info ? fromVersioningInfo(info) : undefined) ?? fromSearchAttributes(run.typedSearchAttributes);
}

function fromVersioningInfo(info: VersioningInfo): RunBuild | undefined {
  const override = info.versioningOverride;
  const pinnedTo = override?.pinned?.version;
  const behavior =
    pinnedTo || override?.behavior === VersioningBehavior.VERSIONING_BEHAVIOR_PINNED
      ? 'pinned'
      : override?.autoUpgrade || override?.behavior === VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE
        ? 'auto-upgrade'
        : behaviorOf(info.behavior);
  const version = pinnedTo ?? info.deploymentVersion;
  if (!behavior || !version?.deploymentName || !version.buildId) return undefined;
  return { deploymentName: version.deploymentName, buildId: version.buildId, behavior };
}

function behaviorOf(behavior: VersioningInfo['behavior']): RunBuild['behavior'] | undefined {
  if (behavior === VersioningBehavior.VERSIONING_BEHAVIOR_PINNED) return 'pinned';
  if (behavior === VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE) return 'auto-upgrade';
  return undefined;
}

function fromSearchAttributes(attributes: RunWithVersioning['typedSearchAttributes']): RunBuild | undefined {
  const version = attributes?.get(WorkerDeploymentVersionKey);
  const named = attributes?.get(VersioningBehaviorKey);
  const behavior = named === 'Pinned' ? 'pinned' : named === 'AutoUpgrade' ? 'auto-upgrade' : undefined;
  const parsed = parseDeploymentVersion(version);
  if (!behavior || !parsed) return undefined;
  return { ...parsed, behavior };
}

/** One line for a person: `1.0.0+abc1234 (pinned, deployment hotel-booking)`, or `unversioned`. */
export function describeRunBuild(build: RunBuild | null | undefined): string {
  return build ? `${build.buildId} (${build.behavior}, deployment ${build.deploymentName})` : 'unversioned';
}
