/**
 * How each workflow type declares its Worker Versioning behaviour. The SDK sends a type's behaviour with every
 * workflow task, and the server refuses a behaviour from a worker that is not versioned ("versioning behavior cannot
 * be specified without deployment options"), which would stop every workflow on an unversioned worker (tests, a
 * single `npm run worker`). So the behaviour is declared as a getter, read once when a run starts on a worker: only
 * a versioned worker (its task carries a deployment name; an unversioned worker has at most a build id) gets it. A run replayed later reads the
 * version recorded in its history, so the answer never changes within a run.
 */
import type { WorkflowDefinitionOptions } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';

/** The run stays on the build it started on (see each workflow's reason beside its call). */
export function pinnedWhenVersioned(): WorkflowDefinitionOptions {
  return workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'PINNED' } : {};
}
