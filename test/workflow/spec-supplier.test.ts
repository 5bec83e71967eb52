/**
 * bookingWorkflow on the time-skipping server against a supplier written from the spec's text
 * (test/fixtures/spec-supplier.ts), not from our schemas: what a supplier may send in the fields that
 * decide nothing never keeps a Confirmed order from confirming its booking.
 *  - references sent as numbers in Book's order: confirmed at once, references as text;
 *  - confirmed on the third QueryOrders poll, references as numbers and the price's amount as text;
 *  - a Failed and a Confirmed order under one reference, in either order: confirmed, and an ERROR line.
 */
import type { BookingOutcome, BookingRequest } from '../../src/api/contract/index';
import { createDriftReporter } from '../../src/runtime/supplier/drift';
import {
  askedReferences,
  bookAnswer,
  ORDER_CONFIRMED,
  ORDER_CONFIRMING,
  ORDER_FAILED,
  ordersAnswer,
  specOrder,
  type SpecSupplier,
} from '../fixtures/spec-supplier';
import { bookingRequest } from '../harness/booking';
import { expectWorkerWarnings, workerLogLines } from '../harness/quiet-worker-logs';
import { specSupplierFile } from '../harness/spec-supplier-file';
import type { SpecWorker } from '../harness/spec-worker';

let spec: SpecSupplier;
let rig: SpecWorker;
const driftPaths: string[] = [];

specSupplierFile('spec-supplier', (file) => ({ spec, rig } = file), {
  drift: createDriftReporter((_message, meta) => driftPaths.push(`${meta.operation} ${meta.path}`)),
});

const book = (request: BookingRequest): Promise<BookingOutcome> => rig.book(request);

/** QueryOrders calls that asked for `ref`. */
const pollsFor = (ref: string) => spec.callsOf('queryOrders').filter((c) => askedReferences(c.body).includes(ref));

test('Book answers Confirmed with hotelConfirmNo and platformReferenceNo as numbers → confirmed at once, references as text', async () => {
  const request = bookingRequest();
  const ref = request.customerReferenceNo;
  spec.script({
    book: () => bookAnswer(specOrder(ref, { hotelConfirmNo: 12345678, platformReferenceNo: 2030060101 })),
  });
  const outcome = await book(request);
  expect(outcome).toMatchObject({
    kind: 'confirmed',
    order: {
      customerReferenceNo: ref,
      status: ORDER_CONFIRMED,
      hotelConfirmNo: '12345678',
      platformReferenceNo: '2030060101',
      supplierReferenceNo: 'SRN-20300601-1',
      price: { currency: 'USD', amount: 240 },
    },
  });
  expect(pollsFor(ref)).toHaveLength(0);
  expect(driftPaths).toEqual(
    expect.arrayContaining(['book data.hotelOrder.hotelConfirmNo', 'book data.hotelOrder.platformReferenceNo']),
  );
});

test('confirmed on the third QueryOrders poll, references as numbers and grossRate.amount as a string → confirmed', async () => {
  // The order's 240.50 is 50 cents above the 240 CheckAvail quoted and the booking accepted: a person is told.
  expectWorkerWarnings(/^ERROR Booking confirmed at a price above the one accepted/);
  const request = bookingRequest();
  const ref = request.customerReferenceNo;
  const drifting = (status: number) =>
    specOrder(ref, {
      status,
      hotelConfirmNo: status === ORDER_CONFIRMED ? 87654321 : undefined,
      platformReferenceNo: 2030060102,
      supplierReferenceNo: 5550001,
      grossRate: { currency: 'USD', amount: '240.50' },
    });
  let polls = 0;
  spec.script({
    book: () => bookAnswer(drifting(ORDER_CONFIRMING)),
    queryOrders: (body) =>
      askedReferences(body).includes(ref)
        ? ordersAnswer(drifting(++polls >= 3 ? ORDER_CONFIRMED : ORDER_CONFIRMING))
        : ordersAnswer(),
  });
  const outcome = await book(request);
  expect(outcome).toMatchObject({
    kind: 'confirmed',
    order: {
      status: ORDER_CONFIRMED,
      hotelConfirmNo: '87654321',
      platformReferenceNo: '2030060102',
      supplierReferenceNo: '5550001',
      price: { currency: 'USD', amount: 240.5 },
    },
  });
  expect(pollsFor(ref)).toHaveLength(3);
});

describe('a Failed and a Confirmed order under one reference', () => {
  const CONFLICT = /^ERROR Supplier lists 2 orders under one customer reference/;

  test.each([
    ['Failed listed first', [ORDER_FAILED, ORDER_CONFIRMED]],
    ['Confirmed listed first', [ORDER_CONFIRMED, ORDER_FAILED]],
  ])('%s → confirmed, with one ERROR line naming the reference and the statuses', async (_name, statuses) => {
    expectWorkerWarnings(CONFLICT);
    const request = bookingRequest();
    const ref = request.customerReferenceNo;
    spec.script({
      // Section 7: a gateway timeout; the order may exist, so the booking asks QueryOrders.
      book: () => ({ status: 504, body: { code: 100000504, msg: 'timeout' } }),
      queryOrders: (body) =>
        askedReferences(body).includes(ref)
          ? ordersAnswer(
              ...statuses.map((status, i) =>
                specOrder(ref, { status, platformReferenceNo: `PRN-${i + 1}`, supplierReferenceNo: `SRN-${i + 1}` }),
              ),
            )
          : ordersAnswer(),
    });
    const outcome = await book(request);
    const confirmedAt = statuses.indexOf(ORDER_CONFIRMED) + 1;
    expect(outcome).toMatchObject({
      kind: 'confirmed',
      order: { status: ORDER_CONFIRMED, platformReferenceNo: `PRN-${confirmedAt}` },
    });
    const line = await conflictLine(CONFLICT, ref);
    expect(line).toContain(`statuses ${statuses.join(', ')}`);
    expect(line).toMatch(/PRN-1.*PRN-2/);
    expect(line).not.toMatch(/Ada|Byron|Lovelace|example\.com/);
  });
});

/** The ERROR line naming `ref`, once the runtime logger delivered it. */
async function conflictLine(pattern: RegExp, ref: string): Promise<string> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const line = workerLogLines().find((l) => pattern.test(l) && l.includes(ref));
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no conflict line for ${ref}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
