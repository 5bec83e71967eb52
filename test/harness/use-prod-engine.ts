/**
 * Setup file of the `prod` tier: the integration files it re-runs reach the production topology that
 * global-setup started, through the same variable they read for the dev server. Jest gives each test
 * file its own copy of process.env, so the integration tier's files are not affected.
 */
const address = process.env.TEST_PROD_SERVER_ADDRESS;
if (!address)
  throw new Error('TEST_PROD_SERVER_ADDRESS is not set: run the prod tier through jest (global-setup starts it)');
process.env.TEST_DEV_SERVER_ADDRESS = address;
process.env.TEST_DEV_SERVER_UI_URL = process.env.TEST_PROD_SERVER_UI_URL;
process.env.TEST_TEMPORAL_ENGINE = 'prod';
