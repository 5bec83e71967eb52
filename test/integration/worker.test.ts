/** The booking worker pair's own life: a failed start releases what it had created. */
import { NativeConnection, Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { createBookingWorker } from '../../src/worker';
import { staticToken } from '../../src/runtime/supplier/token';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import { connectDevServer, workflowBundle } from '../harness/temporal';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await connectDevServer();
});
afterAll(() => env?.teardown());

test('when the QueryOrders worker cannot be created, the booking worker already created is released', async () => {
  const connection = await NativeConnection.connect({ address: env.address });
  const supplier = createHttpSupplierClient({
    baseUrl: 'http://127.0.0.1:9',
    profile: SupplierProfile.parse({}),
    tokens: staticToken('t'),
  });
  // The first Worker.create is the SDK's own; the second fails, as a bad option or a refused queue would.
  const create = Worker.create.bind(Worker);
  const spy = jest
    .spyOn(Worker, 'create')
    .mockImplementationOnce(create)
    .mockRejectedValueOnce(new Error('injected: the QueryOrders worker could not be created'));
  try {
    await expect(
      createBookingWorker({
        connection,
        namespace: 'default',
        taskQueue: `release-${Date.now()}`,
        supplier,
        profile: SupplierProfile.parse({}),
        workflowBundle: workflowBundle(),
      }),
    ).rejects.toThrow(/injected/);
    expect(spy).toHaveBeenCalledTimes(2);
  } finally {
    spy.mockRestore();
    await supplier.close();
    // A worker still holding the connection would make this throw "Workers hold a reference to it".
    await expect(connection.close()).resolves.toBeUndefined();
  }
});
