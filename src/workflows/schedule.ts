/** The recovery schedule as pure arithmetic, so it can be tested without a server. */
import type { RecoveryPolicy } from '../contract';

/**
 * Seconds after the Book at which poll `index` is due: 0, then the running sum of the delays
 * (30, 90, 210, 450, 930 with the defaults), then every `repeatEverySeconds` (1530, 2130, …).
 */
export function pollOffsetSeconds(
  index: number,
  policy: Pick<RecoveryPolicy, 'delaysSeconds' | 'repeatEverySeconds'>,
): number {
  const { delaysSeconds, repeatEverySeconds } = policy;
  let offset = 0;
  for (let i = 0; i < index; i++) offset += delaysSeconds[i] ?? repeatEverySeconds;
  return offset;
}
