/**
 * The sandbox's HTTP vocabulary: an answer (status and body, returned or thrown by a handler), the supplier's
 * envelope, the bad days' special answers (a hang, a reset connection, a malformed body), and reading a request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { describeIssues } from '../../src/api/values/index';

/** An HTTP status and a JSON body; thrown by a handler's checks, returned by the handler otherwise. */
export class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/** What a supplier operation's handler ends with: an answer, or one of a bad day's non-answers. */
export type Handled = HttpAnswer | 'hang' | 'reset' | { malformed: string };

/** The envelope codes of the supplier profile. */
export type Codes = SupplierProfile['codes'];

/** The supplier's envelope: `{code, msg}`, and `data` when there is some. */
export const envelope = (code: number, msg: string, data?: unknown) =>
  data === undefined ? { code, msg } : { code, msg, data };

/** The request's body as JSON (empty reads as null); anything else is a 400 in the supplier's envelope. */
export async function readJson(req: IncomingMessage, codes: Codes): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text || 'null');
  } catch {
    throw new HttpAnswer(400, envelope(codes.badRequest, 'body: not valid JSON'));
  }
}

/** The body checked against the request's schema; a mismatch is a 400 that lists what is wrong. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown, codes: Codes): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new HttpAnswer(
      400,
      envelope(codes.badRequest, `invalid request: ${describeIssues(parsed.error).join('; ')}`),
    );
  return parsed.data;
}

/** The answer a `Test` header's status fault asks for, in the supplier's envelope; undefined for other faults. */
export function faultAnswer(codes: Codes, fault: string, msg?: string): HttpAnswer | undefined {
  switch (fault) {
    case '429':
      return new HttpAnswer(429, envelope(codes.rateLimited, msg ?? 'quota limit exceed'));
    case '400':
      return new HttpAnswer(400, envelope(codes.badRequest, msg ?? 'parameter error'));
    case '403':
      return new HttpAnswer(403, envelope(codes.forbidden, msg ?? 'permission denied'));
    case '500':
      return new HttpAnswer(500, envelope(codes.systemError, msg ?? 'system error'));
    case '503':
      return new HttpAnswer(503, envelope(codes.systemError, msg ?? 'service unavailable'));
    default:
      return undefined;
  }
}

/** Holds the response until the client gives up (a supplier that never answers). */
export const hang = (res: ServerResponse) => new Promise<'hang'>((resolve) => res.once('close', () => resolve('hang')));

/** A request header's (first) value. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Writes the answer as JSON with the supplier's `Server-Cost-Milliseconds`, unless the client has gone. */
export function send(res: ServerResponse, answer: HttpAnswer, started: number, now: () => number): void {
  if (res.destroyed) return;
  res.writeHead(answer.status, {
    'content-type': 'application/json',
    'server-cost-milliseconds': String(now() - started),
  });
  res.end(JSON.stringify(answer.body));
}
