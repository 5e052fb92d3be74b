#!/usr/bin/env node
'use strict';
// Runs test files JOBS at a time in the order given (make check-e2e):
//
//   node [--test-timeout=MS] tools/e2e-run.js JOBS FILE...
//
// `node --test` sorts its files by name; this starts them in the order
// given, so that the slowest can go first and no long one starts last.
// TAP on stdout, as `node --test` prints it; exit status 1 when a test
// failed. --test-timeout, as for `node --test`: each test of a file (the
// files' processes get node's options) and each file as a whole.

const { run } = require('node:test');
const { tap } = require('node:test/reporters');

const [jobs, ...files] = process.argv.slice(2);
if (!(Number(jobs) >= 1) || files.length === 0) {
  process.stderr.write('usage: node [--test-timeout=MS] e2e-run.js JOBS FILE...\n');
  process.exit(2);
}
const t = process.execArgv.map((a) => /^--test-timeout=(\d+)$/.exec(a)).find(Boolean);
const stream = run({ files, concurrency: Number(jobs), timeout: t ? Number(t[1]) : Infinity });
stream.on('test:fail', () => { process.exitCode = 1; });
stream.compose(tap).pipe(process.stdout);
