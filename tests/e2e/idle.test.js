'use strict';
// idle.test.js - an idle plugin tree sleeps (issue 27): no thread polls
// on a short timer of its own. Counted, not timed: the voluntary context
// switches (/proc/<pid>/task/<tid>/status: each one a sleep, so each wake-up
// one) of every thread of every process of the tree over WINDOW_S
// seconds, once the start has settled. Before issue 27 the accept thread
// of the nodeserver and of the registrar woke every 100 ms (rpc/accept.c,
// ACCEPT_POLL_MS: 40 in 4 s) and the nodeserver's health pump every 250 ms
// (16), and the monitor and every child's channel reader once a second
// (the monitor's socket check, the broker's heartbeat). What stays: a
// child's answer to the heartbeat, every 2 s, gRPC core's two timer threads
// (its timer lists are looked at at least once a second), the broker's
// tick and the answers it reads; the monitor's socket check is inotify's
// fallback, every 10 s. The second test holds kubelet's health stream open (kubelet
// 1.34 and later watch every plugin): its pump polled for a cancel every
// 250 ms before; a cancel now wakes it (rpc_call_on_close).
//
//   KP_BUILD=build node --test tests/e2e/idle.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const grpc = require('@grpc/grpc-js');
const { makeRoot, TestDriver, childrenOf, comm, sleep } = require('./lib/plugin');

const WINDOW_S = 4;
const PER_THREAD = 2.5 * WINDOW_S;	// wake-ups of one thread of ours in the window
// gRPC core's own threads: its timer lists are looked at about once a
// second, and with a connection open its event engine's timer thread
// wakes two or three times a second (1.51: a cap, then a few ms later).
// The broker (one thread) wakes for its heartbeat tick and for each
// child's answer: about three a second.
const LOOSE_THREAD = 4.5 * WINDOW_S;
const LOOSE_NAMES = /^(kp-broker|grpc_global_tim|timer_manager|event_engine|default-executo|resolver-execut)/;
const PER_PROCESS = 8 * WINDOW_S;	// of one process, all its threads
// The loops of our own (the monitor, each child's channel reader): the
// heartbeat every 2 s, and nothing else while idle.
const OWN_LOOP = WINDOW_S / 2 + 1;
const OWN_NAMES = /^kp-(monitor|nodeserver|registrar)$/;

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

async function idleWindow(t, withStream) {
  const root = makeRoot();
  const drv = new TestDriver(root, ['--quiet']);
  let client = null;
  t.after(async () => {
    if (client) client.close();
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  if (withStream) {
    client = new grpc.Client(`unix:${root.draSock}`, grpc.credentials.createInsecure());
    const call = client.makeServerStreamRequest('/v1.DRAResourceHealth/NodeWatchResources', (b) => b, (b) => b,
      Buffer.alloc(0), new grpc.Metadata(), {});
    call.on('error', () => {});
    await new Promise((resolve) => call.once('data', resolve));	// the first list: the stream is up
  }
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
  const busy = lines.filter((l) => {
    const n = Number(l.split(': ').pop());
    return n > (LOOSE_NAMES.test(l.split(' ')[2]) ? LOOSE_THREAD : PER_THREAD);
  });
  assert.deepEqual(busy, [], 'threads that woke on a short timer');
  const loops = lines.filter((l) => OWN_NAMES.test(l.split(' ')[2].replace(/:$/, '')) &&
    Number(l.split(': ').pop()) > OWN_LOOP);
  assert.deepEqual(loops, [], `our loops woke more than ${OWN_LOOP} times in ${WINDOW_S} s (the heartbeat is every 2 s)`);
  for (const [p, n] of perProc) assert.ok(n <= PER_PROCESS, `${p}: ${n} wake-ups in ${WINDOW_S} s`);
}

test(`idle: no thread of ours wakes more than ${PER_THREAD} times in ${WINDOW_S} s (the broker and gRPC core's ${LOOSE_THREAD}), no process more than ${PER_PROCESS}`,
  (t) => idleWindow(t, false));

test('idle with a health stream open (kubelet 1.34+): the same bounds', (t) => idleWindow(t, true));
