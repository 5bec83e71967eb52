/** `npm run sandbox`: the sandbox supplier on its own, configured by SANDBOX_* variables. */
import { loadSandboxOptions } from './config';
import { startSandbox } from './server';

async function main(): Promise<void> {
  const options = loadSandboxOptions();
  const sandbox = await startSandbox(options);
  console.log(`Sandbox supplier listening on ${sandbox.url} (mode ${options.mode})`);
  console.log(`  app key: ${options.appKeys[0]!.appKey} (secret from SANDBOX_APP_SECRET)`);
  console.log(`  inspect: ${sandbox.url}/_sandbox/orders, /_sandbox/calls, /_sandbox/stats`);
  const stop = () => {
    void sandbox.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
