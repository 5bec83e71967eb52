/**
 * The contract's shapes: zod schemas beside their types, one module per subject: the booking's input (./request),
 * its state, outcome and messages (./booking), the order after confirmation (./order), the sweep (./sweep).
 *
 * Node code only (client, activities, CLI, tests). Workflow code must not import values from here:
 * building these schemas costs ~3 MB and ~40 ms per workflow in the workflow sandbox, where every
 * cached workflow evaluates its own copy of each module (bench: parked). It imports types only, and
 * the workflow's input is validated by a local activity instead (src/activities/booking.ts).
 */
export * from './request';
export * from './booking';
export * from './order';
export * from './sweep';
