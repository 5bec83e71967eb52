/**
 * A dev server with the booking's search attributes, and the sandbox supplier with its rate limits out of the way,
 * behind the real HTTP supplier client: what the history recorder and the one-off measurements (bench/callback-flood)
 * run a worker against. Everything on free ports; `close` stops it all.
 */
import { SearchAttributeType } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { BookingStageKey, CustomerReferenceNoKey } from '../../src/api/contract/index';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import type { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { ticketTokens } from '../../src/runtime/supplier/token';
import { startSandbox, type Sandbox } from '../sandbox/server';
import { resolveServerExecutable } from '../temporal/binaries';

export interface LocalBookingStack {
  env: TestWorkflowEnvironment;
  sandbox: Sandbox;
  supplier: ReturnType<typeof createHttpSupplierClient>;
  close(): Promise<void>;
}

export async function startLocalBookingStack(profile: SupplierProfile): Promise<LocalBookingStack> {
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: resolveServerExecutable('cli'),
      searchAttributes: [
        { name: BookingStageKey.name, type: SearchAttributeType.KEYWORD },
        { name: CustomerReferenceNoKey.name, type: SearchAttributeType.KEYWORD },
      ],
    },
  });
  // Limits high enough that no 429 lands in a run by accident of timing.
  const sandbox = await startSandbox({
    port: 0,
    rateLimits: { overall: 10_000, checkAvail: 10_000, book: 10_000, queryOrders: 10_000 },
  });
  const tokens = ticketTokens({ baseUrl: sandbox.url, profile, appKey: 'sandbox-app', appSecret: 'sandbox-secret' });
  const supplier = createHttpSupplierClient({ baseUrl: sandbox.url, profile, tokens });
  return {
    env,
    sandbox,
    supplier,
    async close() {
      await supplier.close();
      await tokens.close?.();
      await sandbox.close();
      await env.teardown();
    },
  };
}
