/** `npm run callbacks`: the order-status callback receiver on its own, configured like the worker (src/runtime/config). */
import { Client, Connection } from '@temporalio/client';
import { dataConverterFor } from '../../api/codec/config';
import { loadCallbacksConfig } from '../../runtime/config/index';
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
    ...(config.callbacks.admin ? { admin: config.callbacks.admin } : {}),
    ...(config.callbacks.maxConnections ? { maxConnections: config.callbacks.maxConnections } : {}),
  });
  const stop = () => {
    void receiver
      .close()
      .then(() => connection.close())
      .then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const scheme = config.profile.callbacks;
  const signedWith =
    scheme.verification === 'hmac-sha256-timestamp'
      ? `${scheme.verification} in ${scheme.header} + ${scheme.timestampHeader}, ±${scheme.toleranceSeconds} s`
      : `${scheme.verification} in ${scheme.header}`;
  console.log(
    `Callback receiver on ${receiver.url}${CALLBACK_PATH} (${signedWith}; ` +
      `${config.callbacks.secret ? 'secret set' : 'NO SECRET: every callback is refused'}); ` +
      `metrics and stats on ${receiver.adminUrl}/metrics, ${receiver.adminUrl}/callbacks/stats`,
  );
  if (scheme.verification !== 'hmac-sha256-timestamp') {
    console.warn(
      `WARN: callbacks are verified by ${scheme.verification}, which signs the body only: a captured callback can be ` +
        'replayed (each copy a minute apart is a signal and an early QueryOrders poll). Use hmac-sha256-timestamp when the supplier can sign a timestamp.',
    );
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
