/**
 * deployGateWorkflow: the deploy's proof that a build's workers run (`deploy gate`, before any routing change). The
 * deploy command starts it pinned to the target build by a versioning override, so only that build's workers can
 * take it: it exercises the build's workflow bundle (every workflow module is loaded for its first task) and its
 * activities' wiring (one local activity, one through the task queue, each a round trip through the payload codec),
 * books nothing and calls no supplier. A build that fails its first workflow task, or that no live worker serves,
 * never completes it, and the command refuses the build.
 */
import {
  ApplicationFailure,
  proxyActivities,
  proxyLocalActivities,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import type { GateActivities, GateProbeResult } from '../../activities/gate';
import { pinnedWhenVersioned } from '../versioning';

/** The gate run's id prefix: `deploy-gate:<deployment>:<build id>:<nonce>`. */
export const DEPLOY_GATE_ID_PREFIX = 'deploy-gate:';

export interface DeployGateInput {
  /** The build the run must run on: the deploy's target. */
  deploymentName: string;
  buildId: string;
  /** Chosen by the command; the activities must give it back. */
  nonce: string;
}

export interface DeployGateResult {
  /** The build whose worker ran the first task, as the run itself saw it. */
  ranOn: { deploymentName: string; buildId: string };
  local: GateProbeResult;
  remote: GateProbeResult;
}

/** PINNED: it ends within seconds, on the build it was pinned to. */
setWorkflowOptions(pinnedWhenVersioned, deployGateWorkflow);

const { gateProbe: gateProbeLocal } = proxyLocalActivities<GateActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});
const { gateProbe } = proxyActivities<GateActivities>({
  startToCloseTimeout: '10 seconds',
  // A build that cannot run the activity is refused: the command's ceiling decides, not endless retries.
  scheduleToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

function gateFailure(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'DeployGateFailed', message, nonRetryable: true });
}

/** Its whole input checked first: it says which build it must run on, bounded like every id. */
function inputIssues(input: DeployGateInput, workflowId: string): string[] {
  const text = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 255;
  const issues: string[] = [];
  if (!text(input?.deploymentName)) issues.push('deploymentName: 1 to 255 characters');
  if (!text(input?.buildId)) issues.push('buildId: 1 to 255 characters');
  if (!text(input?.nonce)) issues.push('nonce: 1 to 255 characters');
  if (
    issues.length === 0 &&
    workflowId !== `${DEPLOY_GATE_ID_PREFIX}${input.deploymentName}:${input.buildId}:${input.nonce}`
  ) {
    issues.push('workflow id: must be deploy-gate:<deploymentName>:<buildId>:<nonce>');
  }
  return issues;
}

export async function deployGateWorkflow(input: DeployGateInput): Promise<DeployGateResult> {
  const info = workflowInfo();
  const issues = inputIssues(input, info.workflowId);
  if (issues.length > 0) throw gateFailure(`DeployGateFailed: ${issues.join('; ')}`);
  // The proof is about one build: a run that reached any other (no override, a wrong one) proves nothing.
  const version = info.currentDeploymentVersion;
  if (version?.deploymentName !== input.deploymentName || version?.buildId !== input.buildId) {
    throw gateFailure(
      `DeployGateFailed: ran on ${version ? `${version.deploymentName}:${version.buildId}` : 'an unversioned worker'}, ` +
        `not ${input.deploymentName}:${input.buildId}`,
    );
  }
  const local = await gateProbeLocal({ nonce: input.nonce });
  const remote = await gateProbe({ nonce: input.nonce });
  if (local.nonce !== input.nonce || remote.nonce !== input.nonce) {
    throw gateFailure('DeployGateFailed: an activity did not give back what it was given');
  }
  return { ranOn: { deploymentName: version.deploymentName, buildId: version.buildId }, local, remote };
}
