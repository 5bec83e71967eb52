/** Token buckets per client and operation, refilled continuously; capacity is one second's worth. */
export type LimitedOperation = 'overall' | 'checkAvail' | 'book' | 'queryOrders';
export type RateLimits = Record<LimitedOperation, number>;

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    public limits: RateLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token from the operation's bucket and the overall one; false when either is empty. */
  take(clientKey: string, operation: Exclude<LimitedOperation, 'overall'> | 'cancel'): boolean {
    // Cancel has no documented limit of its own: it counts against the overall one only.
    const ops: LimitedOperation[] = operation === 'cancel' ? ['overall'] : [operation, 'overall'];
    const keys = ops.map((op) => `${clientKey}|${op}`);
    const t = this.now();
    const buckets = keys.map((key, i) => {
      const rate = this.limits[ops[i]!];
      const b = this.buckets.get(key) ?? { tokens: rate, at: t };
      b.tokens = Math.min(rate, b.tokens + ((t - b.at) / 1000) * rate);
      b.at = t;
      this.buckets.set(key, b);
      return b;
    });
    if (buckets.some((b) => b.tokens < 1)) return false;
    for (const b of buckets) b.tokens -= 1;
    return true;
  }

  reset(): void {
    this.buckets.clear();
  }
}
