/**
 * Jest's order of test files, longest first by ./durations.json (seconds each file took in CI on the team's
 * 2-core machine): with two files at a time, a long file started last would run alone at the end. Jest's own order
 * (failed first, then the slowest of its cache, then the largest) breaks ties and places files the list does not
 * name, which a fresh clone, with no cache, would otherwise order by size alone.
 */
// Jest loads a test sequencer as a CommonJS module, before any transform.
/* eslint-disable @typescript-eslint/no-require-imports */
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const seconds = require('./durations.json');

/** The tiers `npm run test:quick` runs two files at a time (package.json). */
const PARALLEL_TIERS = ['unit', 'security', 'supplier', 'replay'];

class LongestFirst extends Sequencer {
  async sort(tests) {
    const jestOrder = await super.sort(tests);
    const place = new Map(jestOrder.map((test, i) => [test, i]));
    // Only the tiers that run two files at a time gain from the order; the server tiers run one file at a time, and
    // keep Jest's own order.
    const known = (test) => {
      const file = path.relative(test.context.config.rootDir, test.path);
      return PARALLEL_TIERS.some((tier) => file.startsWith(`test/${tier}/`)) ? (seconds[file] ?? 0) : 0;
    };
    return [...jestOrder].sort((a, b) => known(b) - known(a) || place.get(a) - place.get(b));
  }
}

module.exports = LongestFirst;
