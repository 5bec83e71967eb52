/** The patch ids of reconciliationSweepWorkflow; sweeps run minutes, so an old path may go a release later. */
export const SWEEP_PATCHES = {
  /**
   * 2026-11-24: the sweep lists cancellations and near check-ins besides bookings; unreadable orders and failed
   * listings are findings (a failed listing no longer fails the sweep); orphans are cancelled only where a booking
   * workflow stands for the reference, within the fee ceiling, by an on-demand order run.
   */
  wholeLife: 'sweep-whole-life',
  /**
   * 2026-11-24: a listing over the ceiling (SweepSliceTooLarge) is listed again in halves, down to a minute,
   * instead of being a failed slice. Asked only when that failure comes: a history without one has no marker.
   */
  halveLargeSlices: 'sweep-halve-large-slices',
  /**
   * 2026-11-25: a check-in listing over the ceiling is cut only between two days (checkInHalves): one day over the
   * ceiling is one failed listing at once, not a dozen listings of that day. Asked only then.
   */
  checkInByDay: 'sweep-check-in-by-day',
} as const;
