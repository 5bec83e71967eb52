/**
 * Scans what operators, exports and backups see (raw workflow histories, log lines) for secrets and
 * personal data. Used by the chaos run and the privacy tests; usable on any exported history.
 */

export const JWT = /eyJ[\w-]+\.[\w-]+\.[\w-]+/;

export interface SecretHit {
  where: string;
  what: string;
}

export interface SecretNeedles {
  /** Exact strings that must never appear (the supplier app secret, encryption key material). */
  secrets: string[];
  /** Personal values; in histories only the booking's own are looked for, in logs everyone's. */
  personal: string[];
}

/**
 * Scans a raw history (as exported without the codec): the JSON itself and every base64 `data` field
 * decoded, so a payload that is merely encoded, not encrypted, is caught.
 */
export function scanHistory(where: string, rawJson: string, needles: SecretNeedles): SecretHit[] {
  const decoded = [...rawJson.matchAll(/"data": ?"([A-Za-z0-9+/=]+)"/g)].map((m) =>
    Buffer.from(m[1]!, 'base64').toString('latin1'),
  );
  const haystacks = [rawJson, ...decoded];
  const hits: SecretHit[] = [];
  for (const text of haystacks) {
    for (const s of needles.secrets) if (text.includes(s)) hits.push({ where, what: label(s, needles) });
    for (const p of needles.personal) if (text.includes(p)) hits.push({ where, what: `personal value "${p}"` });
    if (JWT.test(text)) hits.push({ where, what: 'a JWT' });
  }
  return dedupe(hits);
}

/** Scans log lines for secrets, JWTs and any booking's personal values (matched as whole words). */
export function scanLogLines(lines: { where: string; line: string }[], needles: SecretNeedles): SecretHit[] {
  const personal = new Set(needles.personal);
  const hits: SecretHit[] = [];
  for (const { where, line } of lines) {
    for (const s of needles.secrets) if (line.includes(s)) hits.push({ where, what: label(s, needles) });
    if (JWT.test(line)) hits.push({ where, what: 'a JWT' });
    // Whole tokens, then their parts: an e-mail is one token, the names in it are parts.
    for (const token of line.match(/[\w.@+-]+/g) ?? []) {
      for (const t of [token, ...token.split(/[.@+_-]/)]) {
        if (personal.has(t)) hits.push({ where, what: `personal value "${t}"` });
      }
    }
  }
  return dedupe(hits);
}

/** Names a secret without printing it. */
function label(secret: string, needles: SecretNeedles): string {
  return `secret #${needles.secrets.indexOf(secret) + 1} (${secret.length} chars)`;
}

function dedupe(hits: SecretHit[]): SecretHit[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    const key = `${h.where}|${h.what}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
