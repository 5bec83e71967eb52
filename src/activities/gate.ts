/**
 * The deploy gate's one activity (src/workflows/gate): harmless, it calls nothing outside the worker. Run once as a
 * local activity and once through the task queue, it proves a build's workers have the activities registered and
 * that a payload makes the trip through the worker's data converter (the payload keys) both ways. Its types sit here
 * beside it: no booking workflow reads them.
 */
import { Context } from '@temporalio/activity';

export interface GateProbeInput {
  /** A value the gate run chose: it must come back unchanged. */
  nonce: string;
}

export interface GateProbeResult {
  nonce: string;
  /** The queue the activity ran on, as the worker saw it. */
  taskQueue: string;
  /** Whether it ran as a local activity. */
  local: boolean;
}

/** What the gate workflow sees of its activity. */
export interface GateActivities {
  gateProbe(input: GateProbeInput): Promise<GateProbeResult>;
}

export function createGateActivities(): GateActivities {
  return {
    async gateProbe(input) {
      const { taskQueue, isLocal } = Context.current().info;
      return { nonce: String(input?.nonce ?? ''), taskQueue, local: isLocal };
    },
  };
}
