/**
 * What a chaos run must prove, as pure functions over what it observed: each booking's ending, the
 * sandbox supplier's orders and calls, raw workflow histories and worker log lines, a file per subject.
 *
 * The invariants (each must be 0): two orders for one reference; an order the booking's outcome does not
 * account for (an orphan); a workflow still open past its deadline (stuck); a started workflow the server
 * no longer knows (lost); a workflow that failed instead of returning an outcome; Book sent more often than
 * the recovery policy allows; a secret or personal value in clear in a history or a log line.
 */
export * from './observation';
export * from './orders';
export * from './coverage';
export * from './sweep';
export * from './cancels';
export { JWT, scanHistory, scanLogLines, type SecretHit, type SecretNeedles } from '../../dev/codec/scan';
