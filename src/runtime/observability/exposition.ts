/**
 * Counters in the Prometheus text format, for a process that has no SDK runtime of its own to export them
 * (the callback receiver): the names, help texts and label values of ./definitions.ts, the same conventions
 * as the worker's endpoint (counters end in `_total`), every known series present from the start at 0.
 */
import { ACCOUNT_LABEL, exportedName, labelCombinations, type MetricDefinition } from './definitions';

/** A counter's values by label set: the key is `labelCombinations`' record, serialized by `seriesKey`. */
export type CounterValues = ReadonlyMap<string, number>;

/** The account's label for a series on one, none for a series on no account. */
export function accountLabel(account: string | undefined): Record<string, string> {
  return account ? { [ACCOUNT_LABEL]: account } : {};
}

/** The label sets a known series is started at 0 with: on no account, and on each of `accounts`. */
export function accountLabelSets(accounts: readonly string[]): Array<Record<string, string>> {
  return [{}, ...accounts.map(accountLabel)];
}

/** The key of one series: its labels in the definition's order, then the account's when it has one. */
export function seriesKey(def: MetricDefinition, labels: Record<string, string>): string {
  const names = labels[ACCOUNT_LABEL] !== undefined ? [...def.labels, ACCOUNT_LABEL] : def.labels;
  return names.map((l) => `${l}=${labels[l] ?? ''}`).join(',');
}

/**
 * The text of one counter family: HELP, TYPE, then each series, the known ones first (at 0 when unseen), those of
 * each of `accounts` among them.
 */
export function counterText(def: MetricDefinition, values: CounterValues, accounts: readonly string[] = []): string {
  if (def.kind !== 'counter') throw new Error(`${def.name} is not a counter`);
  const name = exportedName(def);
  const lines = [`# HELP ${name} ${def.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${name} counter`];
  const known = accountLabelSets(accounts).flatMap((account) =>
    labelCombinations(def).map((labels) => seriesKey(def, { ...labels, ...account })),
  );
  const keys = [...known, ...[...values.keys()].filter((k) => !known.includes(k))];
  for (const key of keys) {
    const labels = key
      .split(',')
      .filter(Boolean)
      .map((kv) => {
        const i = kv.indexOf('=');
        return `${kv.slice(0, i)}="${kv
          .slice(i + 1)
          .replace(/\\/g, '\\\\')
          .replace(/"/g, '\\"')}"`;
      });
    lines.push(`${name}${labels.length ? `{${labels.join(',')}}` : ''} ${values.get(key) ?? 0}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The content type of the text format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
