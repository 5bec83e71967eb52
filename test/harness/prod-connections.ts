/** Raw connections to a test's production cluster, each presenting one certificate of its CA, closed together. */
import { Connection } from '@temporalio/client';
import { connectionTls, type Presenter, type StackCertificates } from '../../dev/prod/certs';

/** Where the file's cluster listens and the certificates it trusts; read when a connection is made. */
export type ClusterTarget = () => { address: string; certs: StackCertificates };

/** The connections one test file makes; `closeAll` in its afterAll. */
export class ClusterConnections {
  private readonly open: Connection[] = [];

  constructor(private readonly target: ClusterTarget) {}

  /**
   * A connection as `who` (a stack identity or a certificate pair of the CA). No retry interceptor unless `retry`:
   * a refusal is the answer.
   */
  async connectAs(who: Presenter, { retry = false }: { retry?: boolean } = {}): Promise<Connection> {
    const { address, certs } = this.target();
    const tls = connectionTls(certs, who);
    const connection = await Connection.connect({ address, tls, ...(retry ? {} : { interceptors: [] }) });
    this.open.push(connection);
    return connection;
  }

  /** Closes every connection made, whatever state each is in. */
  async closeAll(): Promise<void> {
    for (const c of this.open.splice(0)) await c.close().catch(() => undefined);
  }
}
