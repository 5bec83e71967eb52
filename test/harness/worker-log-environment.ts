/**
 * The node test environment, telling ./quiet-worker-logs.ts when each test starts and ends (so a test can
 * declare the warnings of its own), and printing its count of hidden lines once the file is over: after
 * the file's own afterAll hooks, whose worker shutdowns log too.
 */
import type { Circus } from '@jest/types';
import { TestEnvironment } from 'jest-environment-node';
import type { WorkerLogHooks } from './quiet-worker-logs';

export default class WorkerLogEnvironment extends TestEnvironment {
  private hooks(): WorkerLogHooks | undefined {
    return (this.global as { __workerLogHooks?: WorkerLogHooks }).__workerLogHooks;
  }

  handleTestEvent(event: Circus.Event): void {
    if (event.name === 'test_start') this.hooks()?.testStarted();
    if (event.name === 'test_done') this.hooks()?.testDone();
  }

  override async teardown(): Promise<void> {
    await this.hooks()?.close();
    const summary = this.hooks()?.summary();
    if (summary) process.stderr.write(`${summary}\n`);
    await super.teardown();
  }
}
