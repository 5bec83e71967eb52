/** The one config schema: defaults, overrides, and errors that name the variable. */
import { ConfigError, loadCallbacksConfig, loadConfig } from '../../src/runtime/config/index';

const base = { SUPPLIER_APP_KEY: 'k', SUPPLIER_APP_SECRET: 's3cret-value' };

test('defaults point at a local Temporal and the sandbox supplier', () => {
  const config = loadConfig(base);
  expect(config.taskQueue).toBe('hotel-booking');
  expect(config.temporal.connection.address).toBe('localhost:7233');
  expect(config.temporal.namespace).toBe('default');
  expect(config.supplier.baseUrl).toBe('http://127.0.0.1:8787');
  expect(config.supplier.credentials).toEqual({ kind: 'ticket', appKey: 'k', appSecret: 's3cret-value' });
  expect(config.supplier.profile.codes.ariChanged).toBe(100001111);
  expect(config.supplier.profile.orderStatus.confirmed).toBe(2);
  expect(config.supplier.profile.timeoutsMs.book).toBe(90_000);
});

test('Temporal connection follows the ecosystem variables', () => {
  const config = loadConfig({ ...base, TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_NAMESPACE: 'bookings' });
  expect(config.temporal.connection.address).toBe('temporal:7233');
  expect(config.temporal.namespace).toBe('bookings');
});

test('a static token wins over app credentials; profile values are overridable one by one', () => {
  const config = loadConfig({
    ...base,
    SUPPLIER_TOKEN: 'tok',
    SUPPLIER_PROFILE: '{"timeoutsMs":{"book":60000},"codes":{"ariChanged":42}}',
  });
  expect(config.supplier.credentials).toEqual({ kind: 'token', token: 'tok' });
  expect(config.supplier.profile.timeoutsMs.book).toBe(60_000);
  expect(config.supplier.profile.timeoutsMs.checkAvail).toBe(15_000);
  expect(config.supplier.profile.codes.ariChanged).toBe(42);
  expect(config.supplier.profile.codes.success).toBe(0);
});

test('errors name each bad variable and never echo a secret', () => {
  let error: unknown;
  try {
    loadConfig({
      SUPPLIER_APP_SECRET: 's3cret-value',
      SUPPLIER_BASE_URL: 'not a url',
      SUPPLIER_PROFILE: '{"timeoutsMs":{"book":-1}}',
    });
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ConfigError);
  const message = (error as Error).message;
  expect(message).toContain('SUPPLIER_BASE_URL');
  expect(message).not.toContain('s3cret-value');
});

test('missing credentials and a bad profile are both reported at once', () => {
  expect(() => loadConfig({ SUPPLIER_PROFILE: '{"timeoutsMs":{"book":-1}}' })).toThrow(
    /SUPPLIER_TOKEN or SUPPLIER_APP_KEY[\s\S]*SUPPLIER_PROFILE\.timeoutsMs\.book/,
  );
  expect(() => loadConfig({ ...base, SUPPLIER_PROFILE: '{not json' })).toThrow(/SUPPLIER_PROFILE: not valid JSON/);
});

test('QueryOrders batching and rate limiting default on, and are configurable', () => {
  const defaults = loadConfig(base).supplier;
  expect(defaults.queryBatch).toEqual({ windowMs: 20, maxReferences: 50, minIntervalMs: 500 });
  expect(defaults.rateLimit).toBe(true);
  expect(defaults.profile.rateLimits).toEqual({ overall: 100, checkAvail: 10, book: 10, queryOrders: 50 });

  const tuned = loadConfig({
    ...base,
    SUPPLIER_QUERY_BATCH_WINDOW_MS: '0',
    SUPPLIER_QUERY_BATCH_MAX_REFERENCES: '20',
    SUPPLIER_QUERY_BATCH_MIN_INTERVAL_MS: '0',
    SUPPLIER_RATE_LIMIT: 'off',
    SUPPLIER_PROFILE: '{"rateLimits":{"overall":2}}',
  }).supplier;
  expect(tuned.queryBatch).toEqual({ windowMs: 0, maxReferences: 20, minIntervalMs: 0 });
  expect(tuned.rateLimit).toBe(false);
  expect(tuned.profile.rateLimits.overall).toBe(2);
});

test("the supplier's QueryOrders page size: 20 by default, overridable, and below 2 refused naming the key", () => {
  const { profile } = loadConfig(base).supplier;
  expect(profile.queryOrders).toEqual({ pageSize: 20 });
  expect(profile.codes.pageSizeExceeded).toBe(100001005);
  const stated = loadConfig({ ...base, SUPPLIER_PROFILE: '{"queryOrders":{"pageSize":100}}' }).supplier.profile;
  expect(stated.queryOrders.pageSize).toBe(100);
  // A page of one would make every answer to a single reference one that may have been cut short.
  for (const pageSize of ['1', '0', '2.5', '"20"']) {
    expect(() => loadConfig({ ...base, SUPPLIER_PROFILE: `{"queryOrders":{"pageSize":${pageSize}}}` })).toThrow(
      /SUPPLIER_PROFILE\.queryOrders\.pageSize/,
    );
  }
  expect(() => loadConfig({ ...base, SUPPLIER_PROFILE: '{"queryOrders":{"limit":50}}' })).toThrow(
    /SUPPLIER_PROFILE\.queryOrders: unknown key "limit"/,
  );
});

test('bad batching and rate-limit values name their variable', () => {
  expect(() => loadConfig({ ...base, SUPPLIER_QUERY_BATCH_MAX_REFERENCES: '0' })).toThrow(
    /SUPPLIER_QUERY_BATCH_MAX_REFERENCES/,
  );
  expect(() => loadConfig({ ...base, SUPPLIER_QUERY_BATCH_WINDOW_MS: '-1' })).toThrow(/SUPPLIER_QUERY_BATCH_WINDOW_MS/);
  expect(() => loadConfig({ ...base, SUPPLIER_QUERY_BATCH_MIN_INTERVAL_MS: 'soon' })).toThrow(
    /SUPPLIER_QUERY_BATCH_MIN_INTERVAL_MS/,
  );
  expect(() => loadConfig({ ...base, SUPPLIER_RATE_LIMIT: 'yes' })).toThrow(/SUPPLIER_RATE_LIMIT/);
});

test('a supplier timeout at or above its activity timeout is refused, naming the field and the bound', () => {
  const base = { SUPPLIER_TOKEN: 't' };
  expect(() => loadConfig({ ...base, SUPPLIER_PROFILE: '{"timeoutsMs":{"book":120000}}' })).toThrow(
    /SUPPLIER_PROFILE\.timeoutsMs\.book: must be at most 110000 ms/,
  );
  expect(() =>
    loadConfig({ ...base, SUPPLIER_PROFILE: '{"timeoutsMs":{"checkAvail":25000,"queryOrders":30000}}' }),
  ).toThrow(/timeoutsMs\.checkAvail[\s\S]*timeoutsMs\.queryOrders/);
  expect(
    loadConfig({ ...base, SUPPLIER_PROFILE: '{"timeoutsMs":{"book":110000}}' }).supplier.profile.timeoutsMs.book,
  ).toBe(110_000);
});

test('registering missing search attributes at start is on by default, off by WORKER_REGISTER_SEARCH_ATTRIBUTES', () => {
  expect(loadConfig(base).worker.registerSearchAttributes).toBe(true);
  expect(loadConfig({ ...base, WORKER_REGISTER_SEARCH_ATTRIBUTES: 'off' }).worker.registerSearchAttributes).toBe(false);
  expect(() => loadConfig({ ...base, WORKER_REGISTER_SEARCH_ATTRIBUTES: 'false' })).toThrow(
    /WORKER_REGISTER_SEARCH_ATTRIBUTES/,
  );
});

describe('SUPPLIER_PROFILE refuses keys it does not know, at every level, naming each', () => {
  const load = (profile: unknown) => () => loadConfig({ ...base, SUPPLIER_PROFILE: JSON.stringify(profile) });

  test('a misspelt order status is an error, not the default', () => {
    expect(load({ orderStatus: { canceled: 7 } })).toThrow('SUPPLIER_PROFILE.orderStatus: unknown key "canceled"');
  });

  test.each([
    [{ timeout: { book: 60_000 } }, 'SUPPLIER_PROFILE: unknown key "timeout"'],
    [{ codes: { sucess: 1 } }, 'SUPPLIER_PROFILE.codes: unknown key "sucess"'],
    [{ paths: { checkavail: '/x' } }, 'SUPPLIER_PROFILE.paths: unknown key "checkavail"'],
    [{ book: { surelyNotMadeStatus: [400] } }, 'SUPPLIER_PROFILE.book: unknown key "surelyNotMadeStatus"'],
    [{ checkAvailStatus: { availabe: 1 } }, 'SUPPLIER_PROFILE.checkAvailStatus: unknown key "availabe"'],
    [{ ticket: { ttl: 60 } }, 'SUPPLIER_PROFILE.ticket: unknown key "ttl"'],
    [{ rateLimits: { queryOrder: 5 } }, 'SUPPLIER_PROFILE.rateLimits: unknown key "queryOrder"'],
    [{ timeoutsMs: { cancelOrder: 5_000 } }, 'SUPPLIER_PROFILE.timeoutsMs: unknown key "cancelOrder"'],
    [{ callbacks: { secret: 'x' } }, 'SUPPLIER_PROFILE.callbacks: unknown key "secret"'],
  ])('%j', (profile, message) => {
    expect(load(profile)).toThrow(message);
  });

  test('every unknown key is named, beside the other problems', () => {
    expect(load({ orderStatus: { canceled: 7, confirmd: 2 }, timeoutsMs: { book: -1 } })).toThrow(
      /orderStatus: unknown key "canceled"[\s\S]*orderStatus: unknown key "confirmd"|orderStatus: unknown key "confirmd"[\s\S]*canceled/,
    );
    expect(load({ orderStatus: { canceled: 7 }, timeoutsMs: { book: -1 } })).toThrow(
      /SUPPLIER_PROFILE\.timeoutsMs\.book/,
    );
  });

  test('every key the documented defaults have is accepted back (a profile can be written out and read in)', () => {
    const full = loadConfig(base).supplier.profile;
    expect(loadConfig({ ...base, SUPPLIER_PROFILE: JSON.stringify(full) }).supplier.profile).toEqual(full);
    expect(
      loadConfig({ ...base, SUPPLIER_PROFILE: '{"rateLimits":{"cancel":5}}' }).supplier.profile.rateLimits.cancel,
    ).toBe(5);
  });
});

test('the callback receiver: admin listener on loopback, a connection cap, and the timestamp scheme from the profile', () => {
  const { callbacks, profile } = loadCallbacksConfig({});
  expect(callbacks).toMatchObject({ admin: { host: '127.0.0.1', port: 8237 }, maxConnections: 256 });
  expect(profile.callbacks).toMatchObject({ verification: 'hmac-sha256', timestampHeader: 'X-Signature-Timestamp' });
  const set = loadCallbacksConfig({
    CALLBACKS_ADMIN_HOST: '10.0.0.5',
    CALLBACKS_ADMIN_PORT: '9237',
    CALLBACKS_MAX_CONNECTIONS: '64',
    SUPPLIER_PROFILE: JSON.stringify({ callbacks: { verification: 'hmac-sha256-timestamp', toleranceSeconds: 120 } }),
  });
  expect(set.callbacks).toMatchObject({ admin: { host: '10.0.0.5', port: 9237 }, maxConnections: 64 });
  expect(set.profile.callbacks).toMatchObject({ verification: 'hmac-sha256-timestamp', toleranceSeconds: 120 });
  expect(() => loadCallbacksConfig({ CALLBACKS_MAX_CONNECTIONS: '0' })).toThrow(/CALLBACKS_MAX_CONNECTIONS/);
});
