/**
 * Each supplier call's client timeout against its activity's: the client must time out first, so its ending is
 * classified by the rules, never a bare "the activity died".
 */
import { ACTIVITY_TIMEOUT_SECONDS } from '../../api/contract/index';
import type { SupplierProfile } from './supplier-profile';

/** Headroom between a supplier call's client timeout and its activity's timeout, for the answer to be read. */
const TIMEOUT_HEADROOM_MS = 10_000;

/** A supplier operation whose client timeout is in the profile's `timeoutsMs`. */
export type SupplierCall = keyof SupplierProfile['timeoutsMs'];

/**
 * Every activity that sends a supplier request: the profile timeout its request runs under, and the activity's
 * own start-to-close timeout as the workflows set it. test/unit/activity-timeouts.test.ts runs the workflows'
 * activity proxies and fails when an activity is missing here or its timeout differs.
 */
export const SUPPLIER_CALL_ACTIVITIES: ReadonlyArray<{
  activity: string;
  call: SupplierCall;
  activitySeconds: number;
}> = [
  { activity: 'checkAvail', call: 'checkAvail', activitySeconds: ACTIVITY_TIMEOUT_SECONDS.checkAvail },
  { activity: 'checkRequestAndAvail', call: 'checkAvail', activitySeconds: ACTIVITY_TIMEOUT_SECONDS.checkAvail },
  { activity: 'book', call: 'book', activitySeconds: ACTIVITY_TIMEOUT_SECONDS.book },
  { activity: 'queryOrder', call: 'queryOrders', activitySeconds: ACTIVITY_TIMEOUT_SECONDS.queryOrders },
  { activity: 'sendCancel', call: 'cancel', activitySeconds: ACTIVITY_TIMEOUT_SECONDS.cancel },
  { activity: 'listOrdersBooked', call: 'queryOrders', activitySeconds: ACTIVITY_TIMEOUT_SECONDS.listOrders },
];

/** The largest client timeout the profile may set for `call`: headroom below every activity that makes it. */
export function supplierTimeoutBoundMs(call: SupplierCall): number | undefined {
  const seconds = SUPPLIER_CALL_ACTIVITIES.filter((a) => a.call === call).map((a) => a.activitySeconds);
  return seconds.length > 0 ? Math.min(...seconds) * 1000 - TIMEOUT_HEADROOM_MS : undefined;
}

/**
 * Each supplier call must time out in the client before its activity does: the client's ending is
 * classified (a Book that timed out in the client is looked up), the activity's is only "it died", and an
 * activity that Temporal retries (Cancel, QueryOrders) would send its request again while the first may still
 * be at the supplier.
 */
export function timeoutIssues(profile: SupplierProfile): string[] {
  const calls = [...new Set(SUPPLIER_CALL_ACTIVITIES.map((a) => a.call))];
  return calls.flatMap((call) => {
    const boundMs = supplierTimeoutBoundMs(call)!;
    if (profile.timeoutsMs[call] <= boundMs) return [];
    const tightest = SUPPLIER_CALL_ACTIVITIES.filter(
      (a) => a.call === call && a.activitySeconds * 1000 - TIMEOUT_HEADROOM_MS === boundMs,
    );
    const names = tightest.map((a) => a.activity).join(' and ');
    return [
      `SUPPLIER_PROFILE.timeoutsMs.${call}: must be at most ${boundMs} ms, ${TIMEOUT_HEADROOM_MS / 1000} s below ` +
        `the ${names} ${tightest.length > 1 ? "activities'" : "activity's"} own ${tightest[0]!.activitySeconds} s timeout`,
    ];
  });
}
