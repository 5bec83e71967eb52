/** Small pieces every group of scenarios uses: a Book request of made-up people, and an attempt kept as a value. */
import { randomUUID } from 'node:crypto';
import { isSupplierError, type SupplierError } from '../../../runtime/supplier/errors';
import type { BookRequest } from '../../../runtime/supplier/schemas';
import { StopRun } from '../session';

/** A reference of the form the spec asks for (uuid), new for every Book the kit sends. */
export const newReference = (): string => randomUUID();

/** A Book request for a made-up guest: a test environment books nothing real, and no real person's data is sent. */
export function bookRequest(customerReferenceNo: string, ratePkgId: string): BookRequest {
  const person = { firstName: 'Conformance', lastName: 'Test' };
  return {
    customerReferenceNo,
    ratePkgId,
    holder: {
      ...person,
      email: 'conformance-test@example.com',
      phone: { countryCode: 'GB', countryNumber: 44, number: '2079460000' },
    },
    guests: [{ roomIndex: 0, ...person, nationalityCode: 'GB', age: 30, isChild: false }],
  };
}

export type Attempt<T> = { ok: true; value: T } | { ok: false; error: SupplierError };

/**
 * A supplier call whose failure is an observation, not an end: a SupplierError comes back as a value. Anything
 * else (the run stopping, a bug of ours) is thrown on.
 */
export async function attempt<T>(call: () => Promise<T>): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    if (err instanceof StopRun || !isSupplierError(err)) throw err;
    return { ok: false, error: err };
  }
}

/** An envelope code answered on HTTP 200 that the client did not know: the code a profile would have to name. */
export function unknownCodeOn200(error: SupplierError): number | undefined {
  const { httpStatus, code } = error.details;
  return error.type === 'SupplierBusinessError' && httpStatus === 200 ? code : undefined;
}
