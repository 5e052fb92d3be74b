'use strict';
// idle.test.js - an idle plugin tree sleeps (issue 27): no thread polls
// on a short timer of its own. Counted, not timed: the voluntary context
// switches (/proc/<pid>/task/<tid>/status: each one a sleep, so each wake-up
// one) of every thread of every process of the tree over WINDOW_S
// seconds, once the start has settled. Before issue 27 the accept thread
// of the nodeserver and of the registrar woke every 100 ms (rpc/accept.c,
// ACCEPT_POLL_MS: 40 in 4 s) and the nodeserver's health pump every 250 ms
// (16). What stays, at about one a second each: a child's answer to the
// broker's heartbeat, gRPC core's two timer threads (its timer lists are
// looked at at least once a second), the broker's and the monitor's
// checks.
//
//   KP_BUILD=build node --test tests/e2e/idle.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { makeRoot, TestDriver, childrenOf, comm, sleep } = require('./lib/plugin');

const WINDOW_S = 4;
const PER_THREAD = 2.5 * WINDOW_S;	// wake-ups of one thread in the window
const PER_PROCESS = 8 * WINDOW_S;	// of one process, all its threads

function treeOf(pid) {
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...childrenOf(out[i]));
  return out;
}

// pid/tid -> { name, n } for every thread of the tree.
function switches(top) {
  const out = new Map();
  for (const p of treeOf(top)) {
    let tids = [];
    try { tids = fs.readdirSync(`/proc/${p}/task`); } catch { continue; }
    for (const t of tids) {
      let s;
      try { s = fs.readFileSync(`/proc/${p}/task/${t}/status`, 'utf8'); } catch { continue; }
      const m = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(s);
      const name = (/^Name:\s+(.*)$/m.exec(s) || [])[1];
      if (m) out.set(`${p}/${t}`, { proc: comm(p), name, n: Number(m[1]) });
    }
  }
  return out;
}

test(`idle: no thread of the tree wakes more than ${PER_THREAD} times in ${WINDOW_S} s, no process more than ${PER_PROCESS}`, async (t) => {
  const root = makeRoot();
  const drv = new TestDriver(root, ['--quiet']);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  await sleep(1500);	// the start's own timers and connections end
  const a = switches(drv.proc.pid);
  await sleep(WINDOW_S * 1000);
  const b = switches(drv.proc.pid);
  const perProc = new Map();
  const lines = [];
  for (const [k, e] of b) {
    const x = a.get(k);
    if (!x) continue;	// a thread that came meanwhile
    const d = e.n - x.n;
    perProc.set(e.proc, (perProc.get(e.proc) || 0) + d);
    if (d > 0) lines.push(`${e.proc} ${k} ${e.name}: ${d}`);
  }
  t.diagnostic(`wake-ups in ${WINDOW_S} s: ${[...perProc].map(([p, n]) => `${p} ${n}`).join(', ')}`);
  for (const l of lines) t.diagnostic(l);
  assert.ok(perProc.has('kp-nodeserver') && perProc.has('kp-registrar'), JSON.stringify([...perProc]));
  const busy = lines.filter((l) => Number(l.split(': ').pop()) > PER_THREAD);
  assert.deepEqual(busy, [], 'threads that woke on a short timer');
  for (const [p, n] of perProc) assert.ok(n <= PER_PROCESS, `${p}: ${n} wake-ups in ${WINDOW_S} s`);
});
