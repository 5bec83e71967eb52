/**
 * `npm run temporal:setup [-- --check]`: prepares a Temporal namespace for the booking workflow, as an
 * operator would before starting workers: checks the namespace and registers the search attributes the
 * workflow writes (idempotent: a second run finds them and changes nothing). `--check` registers nothing
 * and exits 1 naming what is missing; so does a check the service cannot answer, with the commands to run by
 * hand. The connection is read the ecosystem's way (TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TLS: @temporalio/envconfig).
 */
import { parseArgs } from 'node:util';
import { Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { describeUnverified, ensureTemporalReady } from './setup';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const env = Object.fromEntries(
    Object.entries(process.env).filter((kv): kv is [string, string] => kv[1] !== undefined),
  );
  const { connectionOptions, namespace = 'default' } = loadClientConnectConfig({
    overrideEnvVars: env,
    disableFile: !process.env.TEMPORAL_CONFIG_FILE,
  });
  const connection = await Connection.connect(connectionOptions);
  try {
    const ready = await ensureTemporalReady({
      services: connection,
      namespace,
      register: !values.check,
      checkOnlyReason: '--check registers nothing',
    });
    const where = `Namespace "${namespace}" on ${connectionOptions.address ?? 'localhost:7233'}`;
    if (ready.unverified.length > 0) {
      // Nothing was prepared that the service could not confirm: the operator runs the commands instead.
      console.error(`${where}: ${describeUnverified(ready.unverified)}`);
      process.exitCode = 1;
      return;
    }
    console.log(
      ready.registered.length > 0
        ? `${where}: registered ${ready.registered.join(', ')}` +
            (ready.present.length > 0 ? `; ${ready.present.join(', ')} already there` : '')
        : `${where}: ${ready.present.join(', ')} already there; nothing to do`,
    );
  } finally {
    await connection.close();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
