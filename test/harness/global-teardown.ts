/** Stops the servers global-setup started, so no process outlives the run. */
import type { TestWorkflowEnvironment } from '@temporalio/testing';

export default async function globalTeardown(): Promise<void> {
  const envs = ((globalThis as Record<string, unknown>).__temporalEnvs ?? []) as TestWorkflowEnvironment[];
  await Promise.all(envs.map((env) => env.teardown()));
  const prodStops = ((globalThis as Record<string, unknown>).__prodStops ?? []) as Array<() => Promise<void>>;
  for (const stop of prodStops) await stop();
}
