/**
 * The namespaces the console watches (CONSOLE_NAMESPACES): one Temporal client each, over one connection, each with
 * its namespace's own payload keys (a partner's worker reads only what its own key encrypted). Every action and
 * page is addressed to one of them, by the namespace the item was listed in; a namespace a request names that is
 * not configured here is refused before anything is asked of Temporal.
 */
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { EncryptionKeys, type EncryptionCodecOptions } from '../../api/codec/encryption';
import { ConsoleConfigError } from './access';

/** A namespace name as Temporal takes one; anything else in a request is refused unread. */
const NAMESPACE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** A request named a namespace this console does not watch, or named none where it watches several. */
export class NamespaceRefusedError extends Error {
  override readonly name = 'NamespaceRefusedError';
}

export class WatchedNamespaces {
  private readonly byName: ReadonlyMap<string, Client>;

  /** `clients`: one per namespace (distinct), all over the same connection; the first is the home namespace. */
  constructor(clients: readonly Client[]) {
    if (clients.length === 0) throw new ConsoleConfigError('CONSOLE_NAMESPACES: at least one namespace to watch');
    const byName = new Map<string, Client>();
    for (const client of clients) {
      const name = client.options.namespace;
      if (byName.has(name)) throw new ConsoleConfigError(`CONSOLE_NAMESPACES: namespace ${name} is listed twice`);
      if (client.connection !== clients[0]!.connection) {
        throw new ConsoleConfigError(`CONSOLE_NAMESPACES: namespace ${name} has a connection of its own; use one`);
      }
      byName.set(name, client);
    }
    this.byName = byName;
  }

  /** Every namespace watched, the home namespace first. */
  get names(): string[] {
    return [...this.byName.keys()];
  }

  /** Every client, the home namespace's first. */
  get clients(): Client[] {
    return [...this.byName.values()];
  }

  /**
   * The client of the namespace a request names. Nothing named: the one namespace, when the console watches only
   * one (as before it watched several); with several, a request must say which. Throws NamespaceRefusedError.
   */
  clientFor(requested: string | null | undefined): Client {
    if (requested === undefined || requested === null || requested === '') {
      if (this.byName.size === 1) return this.clients[0]!;
      throw new NamespaceRefusedError(`namespace: required; this console watches ${this.names.join(', ')}`);
    }
    const client = NAMESPACE_NAME.test(requested) ? this.byName.get(requested) : undefined;
    if (!client) throw new NamespaceRefusedError('namespace: not one this console watches');
    return client;
  }
}

/** CONSOLE_NAMESPACES as a list: comma-separated, blanks dropped; each a namespace name, none twice. */
export function parseNamespaceList(text: string): string[] {
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!NAMESPACE_NAME.test(name)) {
      throw new ConsoleConfigError(`CONSOLE_NAMESPACES: "${name.slice(0, 60)}" is not a namespace name`);
    }
  }
  if (new Set(names).size !== names.length) throw new ConsoleConfigError('CONSOLE_NAMESPACES: a namespace twice');
  return names;
}

/** A client per namespace over `home`'s connection, each with its namespace's data converter. */
export function namespaceClients(
  home: Client,
  namespaces: readonly string[],
  dataConverterOf: (namespace: string) => DataConverter | undefined,
): Client[] {
  return namespaces.map((namespace) => {
    const dataConverter = dataConverterOf(namespace);
    return new Client({ connection: home.connection, namespace, ...(dataConverter ? { dataConverter } : {}) });
  });
}

/**
 * CONSOLE_NAMESPACE_KEYS_FILE: lines `namespace=keyId:base64key[,keyId:base64key…]` (`#` comments), the payload keys
 * of a namespace whose worker has keys of its own (a partner's); new payloads use the last key of its line. A
 * namespace without a line uses PAYLOAD_ENCRYPTION_KEYS. Problems name the namespace and the line, never a key.
 */
export function parseNamespaceKeys(text: string): Map<string, EncryptionCodecOptions> {
  const byNamespace = new Map<string, EncryptionCodecOptions>();
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    const namespace = at > 0 ? line.slice(0, at).trim() : '';
    const where = `CONSOLE_NAMESPACE_KEYS_FILE: line ${i + 1}`;
    if (!NAMESPACE_NAME.test(namespace)) throw new ConsoleConfigError(`${where} is not namespace=keyId:base64key`);
    if (byNamespace.has(namespace)) throw new ConsoleConfigError(`${where}: namespace ${namespace} again`);
    const keys = EncryptionKeys.safeParse(line.slice(at + 1).trim());
    if (!keys.success || keys.data.size === 0) {
      const why = keys.success ? 'no key' : keys.error.issues.map((issue) => issue.message).join('; ');
      throw new ConsoleConfigError(`${where} (namespace ${namespace}): ${why}`);
    }
    byNamespace.set(namespace, { keys: keys.data, activeKeyId: [...keys.data.keys()].pop()! });
  }
  return byNamespace;
}
