/**
 * The Node flags a worker process runs with: the Dockerfile's CMD, docker-compose's command, `npm run worker`,
 * the `npm run stack:prod` and chaos workers, and the benchmarks' worker child all pass these (a unit test
 * checks the literal copies agree). A flag, not code: V8 reads it when each isolate is created, and the
 * workflow threads' isolates are where a worker's memory grows. (Not settable through NODE_OPTIONS.)
 *
 * Measured 2026-11-23 (README, Performance), `npm run bench -- parked --n 2000` (cache 100) and
 * `throughput --n 800 --worker child --no-floor`:
 *   no flags                                   RSS idle 199 MB, 2,000 parked 328 MB; worker CPU 41.5 s per 800 bookings
 *   --optimize-for-size                        158 / 248 MB; 49.3 s (+19 %)
 *   --max-semi-space-size=2                    169 / 304 MB; 51.7 s (+25 %)
 *   both                                       152 / 240 MB; 60.3 s (+45 %)
 * `--optimize-for-size` (V8 grows its heaps less eagerly and gives memory back sooner) takes nearly all of the
 * memory for less than half the CPU of both. The growth it cuts is not the cached workflows (≈0.45 MB each)
 * but what churning through thousands of workflow instances leaves committed in the workflow threads' heaps.
 * A deployment that needs CPU more than memory drops it from the worker's command.
 */
export const WORKER_NODE_FLAGS: readonly string[] = ['--optimize-for-size'];
