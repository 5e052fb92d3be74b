'use strict';
// exhaustion.test.js - resource exhaustion (issue 15): a hook that never
// returns, and memory over 100 000 claims.
//
//   KP_BUILD=build node --test --test-concurrency=1 tests/e2e/exhaustion.test.js
//
// The hook: claim "hang-forever" blocks the prepare hook for good
// (kp_testdriver). With serialization (the default) kubelet's deadline
// ends that call and the calls queued behind it with DEADLINE_EXCEEDED
// (a 2 s deadline here instead of kubelet's 45 s); the plugin stays
// healthy: same processes, registration kept, GetInfo served, no fds
// piling up. With kp_worker_threads and serialization off other claims
// are prepared meanwhile.
//
// Memory: 100 000 claims through Prepare and Unprepare, in calls of 100
// claims from 6 grpc-js connections (grpc-js is the bottleneck: 100 000
// single-claim calls would take minutes), plus GetInfo calls; VmRSS and
// Pss (smaps_rollup) of every process are sampled after a warm-up and at
// each quarter, and the growth is printed. The bound asserted is
// generous (a leak of 100 bytes a claim would exceed it), not a time.
// KP_MEMORY_FIGURES=<file> writes the samples as JSON.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { randomUUID } = require('node:crypto');
const { KubeletSim, proto } = require('../kubelet-sim');
const { newClient, waitForReady, rawUnary } = require('../kubelet-sim/grpc-util');
const { makeRoot, TestDriver, roles, isAlive, sleep } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const DRA = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/';
const GET_INFO = '/pluginregistration.Registration/GetInfo';
const DEADLINE_EXCEEDED = 4;
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

async function setup(t, args = []) {
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, args);
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 });
  t.after(async () => {
    await sim.stop();
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  sim.start();
  await sim.waitForDriver(DRIVER);
  return { root, drv, sim };
}

const fdCount = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length;

async function codeOf(p) {
  try {
    await p;
    return 0;
  } catch (e) {
    return e.code;
  }
}

// After the assertions: the hook that never returns would hold the
// nodeserver's stop, and so the test's teardown, to the stop deadline
// (twice the 5 s a child gets, supervisor/drain.c).
function endHungHook(nodeserver) {
  try { process.kill(nodeserver, 'SIGKILL'); } catch { /* gone */ }
}

test('a hook that never returns, serialized: DEADLINE_EXCEEDED, the plugin stays healthy', async (t) => {
  const { root, drv, sim } = await setup(t);
  await sim.nodePrepareResources(DRIVER, [claim('before')], { timeoutMs: 5000 });
  const r0 = roles(drv.proc.pid);
  const fds0 = fdCount(r0.nodeserver);
  const hung = sim.nodePrepareResources(DRIVER, [claim('hang-forever')], { timeoutMs: 2000 });
  await drv.stderrMatch(/hook hangs forever/);
  assert.equal(await codeOf(hung), DEADLINE_EXCEEDED);
  // Calls queued behind the hung hook: each ends at its own deadline.
  const queued = await Promise.all(Array.from({ length: 10 }, (_, i) =>
    codeOf(sim.nodePrepareResources(DRIVER, [claim(`queued-${i}`)], { timeoutMs: 1000 }))));
  assert.deepEqual(queued, Array(10).fill(DEADLINE_EXCEEDED));
  // Healthy: no process restarted or died, kubelet keeps the
  // registration, the registrar answers, fds did not pile up.
  const r1 = roles(drv.proc.pid);
  assert.deepEqual(r1, r0);
  for (const p of Object.values(r1)) assert.ok(isAlive(p));
  const info = await sim.callRaw(root.regSock, GET_INFO, Buffer.alloc(0), 2000);
  assert.equal(info.code, 0, info.details);
  assert.equal((await drv.status()).state, 1);
  assert.ok(fdCount(r0.nodeserver) <= fds0 + 2, `nodeserver fds ${fds0} -> ${fdCount(r0.nodeserver)}`);
  assert.doesNotMatch(drv.stderr, /killed by|exited with|violation/);
  endHungHook(r0.nodeserver);
});

test('a hook that never returns, 4 workers without serialization: other claims proceed', async (t) => {
  const { drv, sim } = await setup(t, ['--workers', '4']);
  const hung = sim.nodePrepareResources(DRIVER, [claim('hang-forever')], { timeoutMs: 3000 });
  await drv.stderrMatch(/hook hangs forever/);
  const others = await Promise.all(Array.from({ length: 3 }, (_, i) => {
    const c = claim(`other-${i}`);
    return sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 2500 }).then((r) => r.claims[c.uid].devices[0].device_name);
  }));
  assert.deepEqual(others, ['other-0', 'other-1', 'other-2']);
  for (let i = 0; i < 5; i++) {
    const c = claim(`later-${i}`);
    await sim.nodeUnprepareResources(DRIVER, [c], { timeoutMs: 2500 });
  }
  assert.equal(await codeOf(hung), DEADLINE_EXCEEDED);
  endHungHook(roles(drv.proc.pid).nodeserver);
});

function mem(pid) {
  const kb = (text, key) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
  };
  return {
    rss: kb(fs.readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS'),
    pss: kb(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss'),
  };
}

test('memory stays flat over 100 000 claims (Prepare and Unprepare, 100 a call) and GetInfo calls', async (t) => {
  const TOTAL = Number(process.env.KP_MEMORY_CLAIMS || 100000);
  const PER_CALL = 100;
  const CLIENTS = 6;	// the sim holds one of the 8 connections a socket
  const { root, drv } = await setup(t);
  const r = roles(drv.proc.pid);
  const procs = { driver: drv.proc.pid, supervisor: r.supervisor, nodeserver: r.nodeserver, registrar: r.registrar };
  const prepType = proto.typeName('v1', 'NodePrepareResourcesRequest');
  const unprepType = proto.typeName('v1', 'NodeUnprepareResourcesRequest');
  const clients = Array.from({ length: CLIENTS }, () => ({ dra: newClient(root.draSock), reg: newClient(root.regSock) }));
  t.after(() => clients.forEach((c) => { c.dra.close(); c.reg.close(); }));
  await Promise.all(clients.map((c) => Promise.all([waitForReady(c.dra, 5000), waitForReady(c.reg, 5000)])));
  let failed = 0;
  let calls = 0;
  // n claims, Prepare then Unprepare of each batch, on all clients.
  async function run(n) {
    let next = 0;
    await Promise.all(clients.map(async (c, k) => {
      for (let i = next; i < n; i = (next += PER_CALL)) {
        const claims = Array.from({ length: PER_CALL }, (_, j) => ({ namespace: 'default', name: `m-${k}-${j}`, uid: randomUUID() }));
        const a = await rawUnary(c.dra, `${DRA}NodePrepareResources`, proto.encode(prepType, { claims }), 20000);
        const b = await rawUnary(c.dra, `${DRA}NodeUnprepareResources`, proto.encode(unprepType, { claims }), 20000);
        const g = await rawUnary(c.reg, GET_INFO, Buffer.alloc(0), 20000);
        calls += 3;
        failed += [a, b, g].filter((x) => x.code !== 0).length;
      }
    }));
  }
  await run(10000);	// warm-up: allocator arenas, gRPC's pools
  const samples = [{ claims: 0, ...Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, mem(p)])) }];
  for (let q = 1; q <= 4; q++) {
    await run(TOTAL / 4);
    await sleep(200);
    samples.push({ claims: (TOTAL / 4) * q, ...Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, mem(p)])) });
  }
  const growth = {};
  for (const k of Object.keys(procs)) {
    const first = samples[0][k];
    const last = samples[samples.length - 1][k];
    growth[k] = {
      rssKB: `${first.rss} -> ${last.rss} (${last.rss - first.rss >= 0 ? '+' : ''}${last.rss - first.rss})`,
      pssKB: `${first.pss} -> ${last.pss} (${last.pss - first.pss >= 0 ? '+' : ''}${last.pss - first.pss})`,
      quarters: samples.map((s) => s[k].rss),
      bytesPerClaim: Number((((last.rss - first.rss) * 1024) / TOTAL).toFixed(2)),
    };
  }
  t.diagnostic(`memory over ${TOTAL} claims in ${calls} calls (${failed} failed): ${JSON.stringify(growth)}`);
  if (process.env.KP_MEMORY_FIGURES) fs.writeFileSync(process.env.KP_MEMORY_FIGURES, JSON.stringify({ total: TOTAL, calls, failed, growth, samples }, null, 2));
  assert.equal(failed, 0);
  assert.deepEqual(roles(drv.proc.pid), r, 'a process was restarted');
  for (const k of Object.keys(procs)) {
    const d = samples[samples.length - 1][k].rss - samples[0][k].rss;
    // 100 bytes a claim would be ~10 MB: the bound is below that.
    assert.ok(d < 8192, `${k}: VmRSS grew ${d} kB over ${TOTAL} claims`);
  }
});
