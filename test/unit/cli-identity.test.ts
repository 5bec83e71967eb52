/** The CLI records who acted from what the connection proves (its client certificate), not from what was typed. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { operatorIdentity, recordedAs } from '../../src/operators/shared/identity';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'cli-identity-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/OU=operators/CN=alice',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the client certificate subject when the connection has one', () => {
  const identity = operatorIdentity({
    TEMPORAL_ADDRESS: 'temporal.example:7233',
    TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'cert.pem'),
    TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'key.pem'),
  });
  expect(identity).toBe('OU=operators,CN=alice');
});

test('without a certificate, the account on this host', () => {
  expect(operatorIdentity({})).toBe(`${userInfo().username}@${hostname()}`);
});

test('--by is kept beside the identity, never instead of it', () => {
  expect(recordedAs('OU=operators,CN=alice', 'night desk')).toBe('OU=operators,CN=alice for night desk');
  expect(recordedAs('OU=operators,CN=alice', undefined)).toBe('OU=operators,CN=alice');
  expect(recordedAs('OU=operators,CN=alice', '  ')).toBe('OU=operators,CN=alice');
});
