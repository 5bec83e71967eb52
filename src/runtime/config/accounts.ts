/**
 * Several supplier accounts in one worker (`SUPPLIER_ACCOUNTS_FILE`): a travel company holds accounts with several
 * platforms that speak this interface, often one per market or partner, each with the values the spec leaves "not
 * shown" set its own way. Each account names its base URL, its credential (read from secret files: never in the
 * file itself), its profile (the conformance kit's `proposedProfile` drops in as is: a partial profile over the
 * defaults), and the partners (Temporal namespaces) that may book on it.
 *
 * A bad account is named at start and left out; the others still serve. No account left is an error.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { SUPPLIER_ACCOUNT_PATTERN } from '../../api/contract/definitions';
import { SupplierProfile } from './supplier-profile';
import { timeoutIssues } from './timeouts';

/** Every namespace: an account that books for all partners (one partner per worker, or a shared account). */
export const ANY_PARTNER = '*';

const SecretFile = z.string().min(1, 'a path to a file that holds the secret');

const AccountEntry = z.strictObject({
  /** The id bookings name in `supplier`; lower-case letters, digits and `-`. */
  id: z.string().regex(SUPPLIER_ACCOUNT_PATTERN, 'lower-case letters, digits and -, at most 40'),
  baseUrl: z.url(),
  /** A static bearer token, or Ticket's app key and secret, each read from its file. */
  credentials: z.union([
    z.strictObject({ tokenFile: SecretFile }),
    z.strictObject({ appKeyFile: SecretFile, appSecretFile: SecretFile }),
  ]),
  /** Any part of the supplier profile; the rest takes the defaults (supplier-facts.md). */
  profile: z.unknown().optional(),
  /** The namespaces whose bookings may use this account; `*` for every one. A partner's default is its first. */
  partners: z.array(z.string().min(1)).min(1),
  maxConnections: z.number().int().positive().default(64),
  /** Wait for the profile's rate limits before each request (default); false only for a supplier with none. */
  rateLimit: z.boolean().default(true),
  /**
   * The file that holds the secret this account's callbacks are signed with (its profile's `callbacks` scheme), read
   * by the callback receiver alone for `/callbacks/order-status/<id>` (workers never read it). Absent: the account's
   * callbacks are all refused.
   */
  callbackSecretFile: SecretFile.optional(),
});

const AccountsFile = z.strictObject({ accounts: z.array(z.unknown()).min(1) });

export type SupplierAccountCredentials =
  { kind: 'token'; token: string } | { kind: 'ticket'; appKey: string; appSecret: string };

/** One account as the worker uses it. */
export interface SupplierAccount {
  id: string;
  baseUrl: string;
  credentials: SupplierAccountCredentials;
  profile: SupplierProfile;
  partners: string[];
  maxConnections: number;
  rateLimit: boolean;
}

/** The accounts that passed, and a `SUPPLIER_ACCOUNTS_FILE: accounts[i] (id): message` line for each left out. */
export interface AccountsReading {
  accounts: SupplierAccount[];
  /** Accounts left out; the worker says each at start. */
  leftOut: string[];
}

/** The accounts file's entries, unchecked; throws (with the reason) when the file itself cannot be used. */
function readEntries(file: string): { accounts: unknown[] } {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const why =
      err instanceof SyntaxError ? 'not valid JSON' : `cannot be read (${(err as NodeJS.ErrnoException).code})`;
    throw new Error(`SUPPLIER_ACCOUNTS_FILE: ${file} ${why}`);
  }
  const top = AccountsFile.safeParse(json);
  if (!top.success) throw new Error(`SUPPLIER_ACCOUNTS_FILE: ${file}: expected {"accounts": [ ... ]} with one or more`);
  return top.data;
}

/** Reads and checks the accounts file; throws (with the reason) only when the file itself cannot be used. */
export function readAccountsFile(file: string): AccountsReading {
  const top = readEntries(file);
  const accounts: SupplierAccount[] = [];
  const leftOut: string[] = [];
  const seen = new Set<string>();
  top.accounts.forEach((raw, index) => {
    const name = `accounts[${index}]${isNamed(raw) ? ` (${raw.id})` : ''}`;
    const problems: string[] = [];
    const account = readAccount(raw, path.dirname(file), problems);
    if (account && seen.has(account.id)) problems.push(`id: "${account.id}" is used by an earlier account`);
    if (!account || problems.length > 0) {
      leftOut.push(...problems.map((p) => `SUPPLIER_ACCOUNTS_FILE: ${name}: ${p}`));
      return;
    }
    seen.add(account.id);
    accounts.push(account);
  });
  return withinTimeouts({ accounts, leftOut });
}

/** The accounts whose profile's timeouts fit their activities' (as SUPPLIER_PROFILE's must); the others left out. */
function withinTimeouts(reading: AccountsReading): AccountsReading {
  const leftOut = [...reading.leftOut];
  const accounts = reading.accounts.filter((account) => {
    const problems = timeoutIssues(account.profile);
    for (const p of problems)
      leftOut.push(`SUPPLIER_ACCOUNTS_FILE: ${account.id}: ${p.replace(/^SUPPLIER_PROFILE\./, 'profile.')}`);
    return problems.length === 0;
  });
  if (accounts.length === 0) throw new Error(['SUPPLIER_ACCOUNTS_FILE: no usable account', ...leftOut].join('\n'));
  return { accounts, leftOut };
}

function readAccount(raw: unknown, dir: string, problems: string[]): SupplierAccount | undefined {
  const entry = AccountEntry.safeParse(raw);
  if (!entry.success) {
    for (const issue of entry.error.issues) problems.push(`${issue.path.join('.') || 'entry'}: ${issue.message}`);
    return undefined;
  }
  const e = entry.data;
  const profile = SupplierProfile.safeParse(e.profile ?? {});
  if (!profile.success) {
    for (const issue of profile.error.issues) problems.push(`profile.${issue.path.join('.')}: ${issue.message}`);
  }
  const secret = (field: string, file: string) => readSecret(dir, `credentials.${field}`, file, problems);
  const credentials: SupplierAccountCredentials =
    'tokenFile' in e.credentials
      ? { kind: 'token', token: secret('tokenFile', e.credentials.tokenFile) }
      : {
          kind: 'ticket',
          appKey: secret('appKeyFile', e.credentials.appKeyFile),
          appSecret: secret('appSecretFile', e.credentials.appSecretFile),
        };
  // The callback secret is the receiver's (readCallbackAccounts): a worker never reads it.
  if (problems.length > 0 || !profile.success) return undefined;
  return {
    id: e.id,
    baseUrl: e.baseUrl,
    credentials,
    profile: profile.data,
    partners: e.partners,
    maxConnections: e.maxConnections,
    rateLimit: e.rateLimit,
  };
}

/** A secret file's content without its final newline; a problem names the field and the path, never the content. */
function readSecret(dir: string, field: string, file: string, problems: string[]): string {
  try {
    const text = readFileSync(path.resolve(dir, file), 'utf8').replace(/\r?\n$/, '');
    if (!text) problems.push(`${field}: ${file} is empty`);
    return text;
  } catch (err) {
    problems.push(`${field}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    return '';
  }
}

/** The shortest callback secret taken, as for SUPPLIER_CALLBACK_SECRET. */
const MIN_CALLBACK_SECRET_LENGTH = 16;

function callbackSecretOf(e: z.infer<typeof AccountEntry>, dir: string, problems: string[]): string | undefined {
  if (e.callbackSecretFile === undefined) return undefined;
  const text = readSecret(dir, 'callbackSecretFile', e.callbackSecretFile, problems);
  if (text && text.length < MIN_CALLBACK_SECRET_LENGTH) {
    problems.push(
      `callbackSecretFile: ${e.callbackSecretFile} holds fewer than ${MIN_CALLBACK_SECRET_LENGTH} characters`,
    );
  }
  return text || undefined;
}

/** One account as the callback receiver knows it: what its callbacks are signed by, and with. */
export interface CallbackAccount {
  id: string;
  /** The account's profile: its `callbacks` scheme is how its callbacks are verified. */
  profile: SupplierProfile;
  /** Absent: the account names no callback secret file, and every callback on its path is refused. */
  secret?: string;
}

/**
 * The accounts file as the callback receiver reads it: each account's id, profile and callback secret, and none of
 * its supplier credentials (the receiver calls no supplier, so it need not be able to read them). An account whose
 * entry, profile or callback secret file cannot be used is left out, with a line saying why.
 */
export function readCallbackAccounts(file: string): { accounts: CallbackAccount[]; leftOut: string[] } {
  const top = readEntries(file);
  const accounts: CallbackAccount[] = [];
  const leftOut: string[] = [];
  top.accounts.forEach((raw, index) => {
    const name = `accounts[${index}]${isNamed(raw) ? ` (${raw.id})` : ''}`;
    const problems: string[] = [];
    const entry = AccountEntry.safeParse(raw);
    if (!entry.success) {
      for (const issue of entry.error.issues) problems.push(`${issue.path.join('.') || 'entry'}: ${issue.message}`);
    } else {
      const e = entry.data;
      const profile = SupplierProfile.safeParse(e.profile ?? {});
      if (!profile.success) problems.push('profile: does not parse (the worker names each field)');
      if (accounts.some((a) => a.id === e.id)) problems.push(`id: "${e.id}" is used by an earlier account`);
      const secret = callbackSecretOf(e, path.dirname(file), problems);
      if (problems.length === 0 && profile.success) {
        accounts.push({ id: e.id, profile: profile.data, ...(secret !== undefined ? { secret } : {}) });
      }
    }
    leftOut.push(...problems.map((p) => `SUPPLIER_ACCOUNTS_FILE: ${name}: ${p}`));
  });
  return { accounts, leftOut };
}

/**
 * The accounts (and SUPPLIER_CALLBACK_SECRET, as `SUPPLIER_CALLBACK_SECRET`) that share one callback secret, each
 * group by name only: a callback signed for one of them verifies on the others' paths too, so the account its hint
 * names is not proven.
 */
export function sharedCallbackSecrets(accounts: readonly CallbackAccount[], sharedSecret?: string): string[][] {
  const bySecret = new Map<string, string[]>();
  if (sharedSecret) bySecret.set(sharedSecret, ['SUPPLIER_CALLBACK_SECRET']);
  for (const a of accounts) if (a.secret) bySecret.set(a.secret, [...(bySecret.get(a.secret) ?? []), a.id]);
  return [...bySecret.values()].filter((names) => names.length > 1);
}

/**
 * The callback URL an account's Books carry: the receiver's URL (SUPPLIER_CALLBACK_URL, whose path ends in
 * `/callbacks/order-status`) with the account's id added to its path, so each callback arrives on its account's path
 * and is verified with that account's secret.
 */
export function accountCallbackUrl(callbackUrl: string, accountId: string): string {
  const url = new URL(callbackUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${encodeURIComponent(accountId)}`;
  return url.toString();
}

const isNamed = (raw: unknown): raw is { id: string } =>
  typeof raw === 'object' && raw !== null && typeof (raw as { id?: unknown }).id === 'string';

/** Whether `namespace`'s bookings may use `account`. */
export function mayUse(account: Pick<SupplierAccount, 'partners'>, namespace: string): boolean {
  return account.partners.includes(namespace) || account.partners.includes(ANY_PARTNER);
}

/**
 * The account a booking goes to: the one it names, if its partner may use it; else the partner's default, the
 * first account that lists the partner (by name before `*`). A refusal names the field, and no request is sent.
 */
export function chooseAccount<A extends Pick<SupplierAccount, 'id' | 'partners'>>(
  accounts: readonly A[],
  namespace: string,
  named: string | undefined,
): { account: A } | { refused: string } {
  if (named !== undefined) {
    const account = accounts.find((a) => a.id === named);
    if (!account) return { refused: `supplier: no supplier account "${named}" on this worker` };
    if (!mayUse(account, namespace)) {
      return { refused: `supplier: the account "${named}" is not open to this partner (namespace ${namespace})` };
    }
    return { account };
  }
  const account =
    accounts.find((a) => a.partners.includes(namespace)) ?? accounts.find((a) => a.partners.includes(ANY_PARTNER));
  return account
    ? { account }
    : { refused: `supplier: no supplier account is open to this partner (namespace ${namespace})` };
}
