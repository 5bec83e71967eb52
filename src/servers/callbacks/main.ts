/** `npm run callbacks`: the order-status callback receiver on its own, configured like the worker (src/runtime/config). */
import { Client, Connection } from '@temporalio/client';
import { dataConverterFor } from '../../api/codec/config';
import { readCallbackAccounts, sharedCallbackSecrets, type CallbackAccount } from '../../runtime/config/accounts';
import { loadCallbacksConfig } from '../../runtime/config/index';
import { accountCallbackPath, CALLBACK_PATH, startCallbackReceiver } from './server';
import { temporalCallbackTarget } from './temporal-target';

async function main(): Promise<void> {
  // The accounts file is read here for what callbacks need (ids, profiles, callback secrets), not as a worker reads
  // it: the receiver calls no supplier, so it is given no supplier credential to read.
  const { SUPPLIER_ACCOUNTS_FILE: accountsFile, ...env } = process.env;
  const config = loadCallbacksConfig(env);
  const accounts = accountsFile ? callbackAccounts(accountsFile, config.callbacks.secret) : [];
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
    accounts,
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
  for (const account of accounts) {
    const s = account.profile.callbacks;
    console.log(
      `Account ${account.id}: ${receiver.url}${accountCallbackPath(account.id)} (${s.verification} in ${s.header}; ` +
        `${account.secret ? 'secret set' : 'NO callbackSecretFile: every callback is refused'})`,
    );
  }
  if (scheme.verification !== 'hmac-sha256-timestamp') {
    console.warn(
      `WARN: callbacks are verified by ${scheme.verification}, which signs the body only: a captured callback can be ` +
        'replayed (each copy a minute apart is a signal and an early QueryOrders poll). Use hmac-sha256-timestamp when the supplier can sign a timestamp.',
    );
  }
}

/** The accounts whose callbacks are taken; each one left out is named in a WARN line, and the rest still served. */
function callbackAccounts(file: string, sharedSecret: string | undefined): CallbackAccount[] {
  const { accounts, leftOut } = readCallbackAccounts(file);
  for (const line of leftOut) console.warn(`WARN: ${line}; its callbacks are refused`);
  for (const names of sharedCallbackSecrets(accounts, sharedSecret)) {
    console.warn(
      `WARN: ${names.join(', ')} share one callback secret: a callback signed for one is taken on the others' ` +
        'paths too, so its hint may name the wrong account. Give each account a secret of its own.',
    );
  }
  return accounts;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
