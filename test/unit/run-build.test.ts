/**
 * A run's build as the console and the CLI read it (src/operators/shared/run-build.ts): from a list entry's search attributes or
 * a description's versioning info, unversioned when neither names a behavior; and the console's pages show it
 * escaped, like every other value.
 */
import { TypedSearchAttributes } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import {
  describeRunBuild,
  runBuildOf,
  VersioningBehaviorKey,
  WorkerDeploymentVersionKey,
  type RunBuild,
} from '../../src/operators/shared/run-build';
import type { ConsoleItem } from '../../src/operators/console/items';
import { renderBookingPage, renderPage } from '../../src/operators/console/page';

const { VersioningBehavior } = temporal.api.enums.v1;
const BUILD: RunBuild = { deploymentName: 'hotel-booking', buildId: '1.0.0+abc1234', behavior: 'pinned' };

const listed = (version?: string, behavior?: string) => ({
  typedSearchAttributes: new TypedSearchAttributes([
    ...(version !== undefined ? [{ key: WorkerDeploymentVersionKey, value: version }] : []),
    ...(behavior !== undefined ? [{ key: VersioningBehaviorKey, value: behavior }] : []),
  ]),
  raw: { versioningInfo: null },
});

describe('runBuildOf', () => {
  test('a list entry: the server-set search attributes', () => {
    expect(runBuildOf(listed('hotel-booking:1.0.0+abc1234', 'Pinned'))).toEqual(BUILD);
    expect(runBuildOf(listed('hotel-booking:1.0.0+abc1234', 'AutoUpgrade'))).toEqual({
      ...BUILD,
      behavior: 'auto-upgrade',
    });
  });

  test('a description: its versioning info, which wins over search attributes that lag', () => {
    const described = {
      ...listed('hotel-booking:0.9.0+old', 'Pinned'),
      raw: {
        workflowExecutionInfo: {
          versioningInfo: {
            behavior: VersioningBehavior.VERSIONING_BEHAVIOR_PINNED,
            deploymentVersion: { deploymentName: 'hotel-booking', buildId: '1.0.0+abc1234' },
          },
        },
      },
    };
    expect(runBuildOf(described)).toEqual(BUILD);
  });

  test('a pinned override moves the run to the build it names', () => {
    const overridden = {
      raw: {
        workflowExecutionInfo: {
          versioningInfo: {
            behavior: VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE,
            deploymentVersion: { deploymentName: 'hotel-booking', buildId: '0.9.0+old' },
            versioningOverride: { pinned: { version: { deploymentName: 'hotel-booking', buildId: '1.0.0+abc1234' } } },
          },
        },
      },
    };
    expect(runBuildOf(overridden)).toEqual(BUILD);
  });

  test.each([
    ['nothing at all', {}],
    ['no search attributes', listed()],
    ['a version without a behavior', listed('hotel-booking:1.0.0+abc1234')],
    ['an unknown behavior', listed('hotel-booking:1.0.0+abc1234', 'Sideways')],
    ['a version without a colon', listed('hotel-booking.1.0.0', 'Pinned')],
    ['a version with no build id', listed('hotel-booking:', 'Pinned')],
    [
      'a worker that names a build but is not versioned (behavior unspecified)',
      {
        raw: {
          workflowExecutionInfo: {
            versioningInfo: {
              behavior: VersioningBehavior.VERSIONING_BEHAVIOR_UNSPECIFIED,
              deploymentVersion: { deploymentName: 'hotel-booking', buildId: '1.0.0+abc1234' },
            },
          },
        },
      },
    ],
  ])('unversioned: %s', (_, run) => {
    expect(runBuildOf(run)).toBeUndefined();
  });

  test('described for a person', () => {
    expect(describeRunBuild(BUILD)).toBe('1.0.0+abc1234 (pinned, deployment hotel-booking)');
    expect(describeRunBuild(undefined)).toBe('unversioned');
    expect(describeRunBuild(null)).toBe('unversioned');
  });
});

describe('the console shows it escaped', () => {
  const hostile: RunBuild = { deploymentName: 'd"><b>x', buildId: '<script>alert(1)</script>', behavior: 'pinned' };
  const item = (build: RunBuild | null, ref: string): ConsoleItem => ({
    kind: 'unresolved-booking',
    workflowId: `booking:${ref}`,
    runId: 'run-1',
    customerReferenceNo: ref,
    stage: 'unresolved',
    build,
    summary: 'Book sent 1 time(s)',
    polls: [],
    actions: ['handled'],
  });

  test('each row of the list: the build id and behavior, or unversioned', () => {
    const html = renderPage({ items: [item(BUILD, 'r-1'), item(null, 'r-2'), item(hostile, 'r-3')] });
    expect(html).toContain('<th>Build</th>');
    expect(html).toContain('<code>1.0.0+abc1234</code> <small>pinned</small>');
    expect(html).toContain('<span class="build">unversioned</span>');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>x');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('href="/booking?ref=r-1"');
  });

  test("a booking's page: each run's build", () => {
    const run = { runId: 'run-1', type: 'bookingWorkflow', status: 'COMPLETED', startTime: '2026-11-28T10:00:00.000Z' };
    const html = renderBookingPage({
      customerReferenceNo: '<i>ref</i>',
      detail: {
        customerReferenceNo: '<i>ref</i>',
        booking: { ...run, workflowId: 'booking:<i>ref</i>', stage: 'confirmed', build: hostile },
        order: null,
      },
    });
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<i>');
    expect(html).toContain('&lt;script&gt;');
    expect(html).toContain('<td colspan="5">none</td>');
  });
});
