/**
 * The booking contract: everything a caller in any language needs to start, watch and steer a booking.
 *
 * One module for callers: the names (./definitions), the messages (./messages) and the shapes (./schemas, zod schemas beside
 * their types). Workflow code imports ./definitions and ./messages for values and this module for types only.
 */
export * from './definitions';
export * from './messages';
export * from './schemas';
