/**
 * A request body read up to a limit, for the listeners that face a network (the callback receiver, the codec
 * server): a body over the limit is never held in memory, so a stranger's 10 MB body costs nothing.
 */
import type { IncomingMessage } from 'node:http';

/**
 * The body, or undefined when it is over `maxBytes`: a declared content-length over it is not read at all, a
 * chunked one stops being read at the limit, and nothing read is kept. Rejects when the client goes away (or a
 * server timeout closes the socket) before the body ended: there is nobody to answer.
 */
export function readLimitedBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(undefined);
  return new Promise<Buffer | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        req.pause();
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => reject(new Error('request closed before its body ended')));
  });
}
