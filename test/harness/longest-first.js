/**
 * Jest's order of test files, longest first by ./durations.json (seconds each file took on the team's 2-core
 * machine, one file at a time where it was measured so): with two files at a time, a long file started last would
 * run alone at the end. Jest's own order (failed first, then the slowest of its cache, then the largest) breaks ties
 * and places files the list does not name, which a fresh clone, with no cache, would otherwise order by size alone.
 */
// Jest loads a test sequencer as a CommonJS module, before any transform.
/* eslint-disable @typescript-eslint/no-require-imports */
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const seconds = require('./durations.json');
const { NO_TEMPORAL_SERVER, selectedFileSet } = require('./file-sets');

class LongestFirst extends Sequencer {
  async sort(tests) {
    const jestOrder = await super.sort(tests);
    const place = new Map(jestOrder.map((test, i) => [test, i]));
    // Only the runs of two files at a time gain from the order (the quick tiers, and the server tiers' parallel
    // set); a run of one file at a time keeps Jest's own order.
    const twoAtATime = selectedFileSet() === 'parallel';
    const known = (test) => {
      const file = path.relative(test.context.config.rootDir, test.path);
      const quick = NO_TEMPORAL_SERVER.some((tier) => file.startsWith(`test/${tier}/`));
      return quick || twoAtATime ? (seconds[file] ?? 0) : 0;
    };
    return [...jestOrder].sort((a, b) => known(b) - known(a) || place.get(a) - place.get(b));
  }
}

module.exports = LongestFirst;
