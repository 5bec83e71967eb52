/**
 * Setup file of every tier: the servers of the Jest worker this file runs in (global-setup starts one set per
 * worker, `TEST_DEV_SERVER_ADDRESS_2`, ...) under the plain names the files and ./temporal.ts read. Jest gives each
 * test file its own copy of process.env, so this changes nothing for a file in another worker.
 */
const worker = process.env.JEST_WORKER_ID ?? '1';
for (const name of ['TEST_TIME_SKIPPING_ADDRESS', 'TEST_DEV_SERVER_ADDRESS', 'TEST_DEV_SERVER_UI_URL']) {
  // A worker beyond the servers started (the prod engine is one, for every worker) keeps the first.
  const own = process.env[`${name}_${worker}`];
  if (own) process.env[name] = own;
}
