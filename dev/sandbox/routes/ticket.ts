/** Ticket: the supplier's authentication, a ticket for an app key and secret it knows. */
import { TicketRequest } from '../../../src/runtime/supplier/schemas';
import { envelope, HttpAnswer } from '../http';
import type { OperationHandler } from '../state';

/** Answers a Ticket request: a signed ticket for a known app key and secret, else 401. */
export const ticket: OperationHandler = async (state, req) => {
  const { codes } = state;
  const body = await state.bodyOf(req, TicketRequest);
  const token = state.auth.issue(body.appKey, body.appSecret, body.ttl ?? state.profile.ticket.ttlSeconds);
  if (!token) return new HttpAnswer(401, envelope(codes.unauthorized, 'authentication failed'));
  return new HttpAnswer(200, envelope(codes.success, 'Success', { ticket: token }));
};
