/**
 * The readiness check against a service that cannot answer part of it: UNIMPLEMENTED (the Java test server's
 * operator API) and PERMISSION_DENIED (a worker allowed to run workflows but not to read the namespace's
 * settings) leave the check unverified, with the commands that set it up; every other failure, and every answer
 * that shows something wrong, still stops the worker.
 */
import { temporal } from '@temporalio/proto';
import {
  describeUnverified,
  ensureTemporalReady,
  TemporalSetupError,
  unanswered,
  type TemporalServices,
} from '../../src/runtime/namespace/setup';

const { IndexedValueType } = temporal.api.enums.v1;
const KEYWORD = IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

/** A gRPC failure as both the client's and the worker's connections raise it: a numeric code and details. */
function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details });
}
const UNIMPLEMENTED = () =>
  grpcError(12, 'Method temporal.api.operatorservice.v1.OperatorService/ListSearchAttributes is unimplemented');
const PERMISSION_DENIED = () => grpcError(7, 'Request unauthorized.');

function services(answers: {
  describeNamespace?: () => Promise<unknown>;
  listSearchAttributes?: () => Promise<unknown>;
  addSearchAttributes?: () => Promise<unknown>;
}): TemporalServices & { added: number } {
  const calls = { added: 0 };
  return Object.assign(calls, {
    workflowService: { describeNamespace: answers.describeNamespace ?? (async () => ({})) },
    operatorService: {
      listSearchAttributes: answers.listSearchAttributes ?? (async () => ({ customAttributes: {} })),
      addSearchAttributes: async () => {
        calls.added++;
        return (answers.addSearchAttributes ?? (async () => ({})))();
      },
    },
  }) as never;
}

describe('unanswered: which failures mean the service cannot answer', () => {
  test('UNIMPLEMENTED and PERMISSION_DENIED, named with the method', () => {
    expect(unanswered(UNIMPLEMENTED(), 'ListSearchAttributes')).toEqual({
      status: 'UNIMPLEMENTED',
      reason: 'the service does not implement ListSearchAttributes (UNIMPLEMENTED)',
    });
    expect(unanswered(PERMISSION_DENIED(), 'ListSearchAttributes')).toEqual({
      status: 'PERMISSION_DENIED',
      reason: 'this worker may not call ListSearchAttributes (PERMISSION_DENIED: Request unauthorized.)',
    });
  });

  test('a wrapped gRPC error (the client wraps schedule calls) is read through its cause', () => {
    const wrapped = new Error('Failed to create schedule', { cause: UNIMPLEMENTED() });
    expect(unanswered(wrapped, 'CreateSchedule')?.status).toBe('UNIMPLEMENTED');
    const denied = new Error('Failed to create schedule', { cause: PERMISSION_DENIED() });
    expect(unanswered(denied, 'CreateSchedule')?.reason).toContain('Request unauthorized.');
  });

  test.each([
    ['NOT_FOUND', 5],
    ['UNAVAILABLE', 14],
    ['DEADLINE_EXCEEDED', 4],
    ['UNAUTHENTICATED', 16],
    ['INTERNAL', 13],
  ])('%s is a failure, not an unanswered check', (_name, code) => {
    expect(unanswered(grpcError(code, 'x'), 'ListSearchAttributes')).toBeUndefined();
  });

  test('errors without a gRPC code are failures', () => {
    expect(unanswered(new Error('boom'), 'ListSearchAttributes')).toBeUndefined();
    expect(unanswered(undefined, 'ListSearchAttributes')).toBeUndefined();
    expect(unanswered({ code: 'ECONNREFUSED' }, 'ListSearchAttributes')).toBeUndefined();
  });
});

describe('ensureTemporalReady when the service cannot answer', () => {
  test.each([
    ['UNIMPLEMENTED', UNIMPLEMENTED, /does not implement ListSearchAttributes/],
    ['PERMISSION_DENIED', PERMISSION_DENIED, /may not call ListSearchAttributes/],
  ])('listing refused as %s: unverified, with the commands, and nothing registered', async (_name, error, why) => {
    const svc = services({
      listSearchAttributes: async () => {
        throw error();
      },
    });
    const ready = await ensureTemporalReady({ services: svc, namespace: 'bookings', register: true });
    expect(ready).toMatchObject({ namespace: 'bookings', present: [], registered: [] });
    expect(ready.unverified).toHaveLength(1);
    expect(ready.unverified[0]!.message).toMatch(why);
    expect(ready.unverified[0]!.message).toContain('BookingStage (Keyword), CustomerReferenceNo (Keyword)');
    expect(ready.unverified[0]!.commands).toContain(
      'temporal operator search-attribute create --namespace bookings --name BookingStage --type Keyword',
    );
    expect(svc.added).toBe(0);
  });

  test('a namespace the service cannot describe is unverified too, and the attributes are still checked', async () => {
    const ready = await ensureTemporalReady({
      services: services({
        describeNamespace: async () => {
          throw PERMISSION_DENIED();
        },
        listSearchAttributes: async () => ({
          customAttributes: { BookingStage: KEYWORD, CustomerReferenceNo: KEYWORD },
        }),
      }),
      namespace: 'bookings',
      register: true,
    });
    expect(ready.present.sort()).toEqual(['BookingStage', 'CustomerReferenceNo']);
    expect(ready.unverified).toEqual([
      {
        message: expect.stringContaining('Could not verify that Temporal namespace "bookings" exists'),
        commands: ['temporal operator namespace create --namespace bookings'],
      },
    ]);
  });

  test('one text for the WARN line: each unverified check and its commands, indented', () => {
    expect(
      describeUnverified([
        { message: 'A:', commands: ['one', 'two'] },
        { message: 'B:', commands: ['three'] },
      ]),
    ).toBe('A:\n  one\n  two\nB:\n  three');
  });

  test('a service that answers and everything is there: nothing unverified', async () => {
    const ready = await ensureTemporalReady({
      services: services({
        listSearchAttributes: async () => ({
          customAttributes: { BookingStage: KEYWORD, CustomerReferenceNo: KEYWORD },
        }),
      }),
      namespace: 'default',
      register: true,
    });
    expect(ready.unverified).toEqual([]);
  });
});

describe('ensureTemporalReady still refuses what the service says is wrong', () => {
  test('another failure of the listing (UNAVAILABLE) is thrown as it is', async () => {
    const unavailable = grpcError(14, 'connection refused');
    await expect(
      ensureTemporalReady({
        services: services({
          listSearchAttributes: async () => {
            throw unavailable;
          },
        }),
        namespace: 'default',
        register: true,
      }),
    ).rejects.toBe(unavailable);
  });

  test('a missing namespace (NOT_FOUND) is NamespaceNotFound', async () => {
    await expect(
      ensureTemporalReady({
        services: services({
          describeNamespace: async () => {
            throw grpcError(5, 'Namespace bookings is not found.');
          },
        }),
        namespace: 'bookings',
        register: true,
      }),
    ).rejects.toMatchObject({ type: 'NamespaceNotFound' });
  });

  test('an attribute of the wrong type is SearchAttributeWrongType', async () => {
    const error = await ensureTemporalReady({
      services: services({
        listSearchAttributes: async () => ({
          customAttributes: { BookingStage: IndexedValueType.INDEXED_VALUE_TYPE_TEXT, CustomerReferenceNo: KEYWORD },
        }),
      }),
      namespace: 'default',
      register: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporalSetupError);
    expect(error).toMatchObject({ type: 'SearchAttributeWrongType' });
  });

  test('missing attributes with registering off are SearchAttributesMissing', async () => {
    await expect(
      ensureTemporalReady({ services: services({}), namespace: 'default', register: false }),
    ).rejects.toMatchObject({ type: 'SearchAttributesMissing' });
  });
});
