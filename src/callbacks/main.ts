/** `npm run callbacks`: the order-status callback receiver on its own, configured like the worker (src/config). */
import { Client, Connection } from '@temporalio/client';
import { dataConverterFor } from '../codec/config';
import { loadCallbacksConfig } from '../config';
import { CALLBACK_PATH, startCallbackReceiver } from './server';
import { temporalCallbackTarget } from './temporal-target';

async function main(): Promise<void> {
  const config = loadCallbacksConfig();
  const connection = await Connection.connect(config.temporal.connection);
  const client = new Client({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: dataConverterFor(config.encryption),
  });
  const receiver = await startCallbackReceiver({
    host: config.callbacks.host,
    port: config.callbacks.port,
    profile: config.profile,
    secret: config.callbacks.secret,
    target: temporalCallbackTarget(client, { taskQueue: config.taskQueue }),
  });
  console.log(
    `Callback receiver on ${receiver.url}${CALLBACK_PATH} (${config.profile.callbacks.verification} in ` +
      `${config.profile.callbacks.header}; ${config.callbacks.secret ? 'secret set' : 'NO SECRET: every callback is refused'}); ` +
      `metrics on ${receiver.url}/metrics`,
  );
  const stop = () => {
    void receiver
      .close()
      .then(() => connection.close())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
