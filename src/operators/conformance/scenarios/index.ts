/**
 * Every scenario, in the order they run: each later one may build on what an earlier one booked or saw (the
 * main order is booked, repeated, followed until confirmed, found by each key, then cancelled).
 */
import type { Scenario } from '../types';
import { bookAnswered, bookIdempotent, bookRefused, bookRejected } from './book';
import { cancelConfirmed, cancelFee, cancelRepeat, cancelWrongReference } from './cancel';
import { authRefused, checkAvailAvailable, checkAvailPriceChanged, checkAvailUnavailable } from './check-avail';
import { fieldTypes, orderStatuses, rateLimits, timestamps } from './fields';
import {
  queryOrdersByBookingTime,
  queryOrdersByCancelledTime,
  queryOrdersByCheckInTime,
  queryOrdersByCheckOutTime,
  queryOrdersByFreeCancelTime,
  queryOrdersByPlatformReference,
  queryOrdersByStatus,
  queryOrdersBySupplierReference,
  queryOrdersConsistent,
  queryOrdersListed,
  queryOrdersPageSize,
  queryOrdersUnknownReference,
} from './query-orders';

export { manualScenarios } from './manual';

export const scenarios: Scenario[] = [
  checkAvailAvailable,
  checkAvailUnavailable,
  checkAvailPriceChanged,
  authRefused,
  bookAnswered,
  bookIdempotent,
  queryOrdersListed,
  queryOrdersConsistent,
  queryOrdersByPlatformReference,
  queryOrdersBySupplierReference,
  queryOrdersByBookingTime,
  queryOrdersByCheckInTime,
  queryOrdersByCheckOutTime,
  queryOrdersByFreeCancelTime,
  queryOrdersByStatus,
  queryOrdersUnknownReference,
  bookRefused,
  bookRejected,
  cancelWrongReference,
  cancelConfirmed,
  cancelFee,
  cancelRepeat,
  queryOrdersByCancelledTime,
  queryOrdersPageSize,
  fieldTypes,
  timestamps,
  orderStatuses,
  rateLimits,
];
