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
} as const;
