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

/** Reads and checks the accounts file; throws (with the reason) only when the file itself cannot be used. */
export function readAccountsFile(file: string): AccountsReading {
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
  const accounts: SupplierAccount[] = [];
  const leftOut: string[] = [];
  const seen = new Set<string>();
  top.data.accounts.forEach((raw, index) => {
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
  const secret = (field: string, file: string): string => {
    try {
      const text = readFileSync(path.resolve(dir, file), 'utf8').replace(/\r?\n$/, '');
      if (!text) problems.push(`credentials.${field}: ${file} is empty`);
      return text;
    } catch (err) {
      // The path only, never the content.
      problems.push(`credentials.${field}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return '';
    }
  };
  const credentials: SupplierAccountCredentials =
    'tokenFile' in e.credentials
      ? { kind: 'token', token: secret('tokenFile', e.credentials.tokenFile) }
      : {
          kind: 'ticket',
          appKey: secret('appKeyFile', e.credentials.appKeyFile),
          appSecret: secret('appSecretFile', e.credentials.appSecretFile),
        };
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
