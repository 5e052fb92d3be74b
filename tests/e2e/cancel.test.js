'use strict';
// cancel.test.js - calls kubelet gave up on stop costing (issue 28,
// findings 2 and 3), against the API-server emulator with the publisher's
// GET budget paced low (--kube-qps) and a grpc-js kubelet peer:
//
//   KP_BUILD=build node --test --test-concurrency=1 tests/e2e/cancel.test.js
//
// - a prepare cancelled by the client withdraws its look-ups (nodeserver,
//   supervisor, publisher), runs no hook, and is answered before a
//   1-claim prepare sent after the cancel is;
// - a backlog larger than one call's share of the GET budget converges
//   with retries: each attempt prepares what its look-ups got, the
//   journal answers those on the next attempt without a GET, and the
//   nodeserver never has more prepares in flight than the client;
// - an unprepare of a prepared claim is answered while 8 prepares wait
//   for their look-ups (it needs no worker they hold).
// Counts (GETs, hook runs, calls in flight, order of answers), no times.
// KP_SOAK=1 adds the full-size backlog: 1,000 claims, 4 calls, kubelet's
// 45 s deadline, the default 5 GET/s (minutes; prints its figures).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const parsePrometheus = require('parse-prometheus-text-format');
const { randomUUID } = require('node:crypto');
const { KubeletSim, proto } = require('../kubelet-sim');
const { readJournal } = require('./lib/journal');
const { newClient } = require('../kubelet-sim/grpc-util');
const { makeRoot, withApi, until, sleep, giveToNodeserver, freePort, childLines } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';

// claims named prefix-0.. with an allocation for this driver
function addClaims(emu, prefix, n) {
  return Array.from({ length: n }, (_, i) => {
    const c = { namespace: 'default', name: `${prefix}-${i}`, uid: randomUUID() };
    emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: `dev-${i}` }] } });
    return c;
  });
}

async function setup(t, qps, extra = []) {
  const root = makeRoot(DRIVER);
  const journal = path.join(root.dir, 'state');
  giveToNodeserver(journal);
  const port = await freePort();
  const { emu, drv } = await withApi(t, root, ['--journal-dir', journal, '--kube-qps', qps,
    '--http-endpoint', `127.0.0.1:${port}`, '-v', '2', ...extra]);
  const sim = new KubeletSim({ registryDir: root.registry, version: '1.34', retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  return { root, emu, drv, sim, port, journal };
}

// GETs of the named claims so far.
const gets = (emu, names) => emu.requests({ method: 'GET', path: '/resourceclaims/' })
  .filter((e) => names.has(e.path.split('/').pop())).length;

// How often the prepare hook saw each claim (kp_testdriver's ALLOC lines).
const hookRuns = (drv, name) => childLines(drv.stderr).filter((l) => l.startsWith(`ALLOC default/${name} `)).length;

// A prepare whose client can cancel it: { done: Promise<code>, cancel }.
function cancellable(draSock, claims, timeoutMs) {
  const client = newClient(draSock);
  const req = proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'),
    { claims: claims.map(({ namespace, name, uid }) => ({ namespace, name, uid })) });
  let call;
  const done = new Promise((resolve) => {
    call = client.makeUnaryRequest(PREPARE, (b) => b, (b) => b, req, new grpc.Metadata(),
      { deadline: Date.now() + timeoutMs }, (err) => { client.close(); resolve(err ? err.code : 0); });
  });
  return { done, cancel: () => call.cancel() };
}

async function inFlight(port) {
  const r = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) });
  for (const f of parsePrometheus(await r.text())) {
    if (f.name !== 'kubeletplugin_grpc_requests_in_flight') continue;
    const m = f.metrics.find((x) => (x.labels || {}).method === PREPARE);
    return m ? Number(m.value) : 0;
  }
  return 0;
}

test('a cancelled prepare withdraws its look-ups, runs no hook, frees its place', async (t) => {
  const { emu, drv, sim, root } = await setup(t, '4:1');
  const big = addClaims(emu, 'big', 60);
  const names = new Set(big.map((c) => c.name));
  const p = cancellable(root.draSock, big, 60000);
  // Some look-ups done, most still waiting for the GET budget.
  await until(() => gets(emu, names) >= 3, 20000);
  p.cancel();
  assert.equal(await p.done, grpc.status.CANCELLED);
  const atCancel = gets(emu, names);
  // A 1-claim prepare after the cancel: prepared; by then the cancelled
  // call was answered (it no longer counts as in flight).
  const [one] = addClaims(emu, 'after', 1);
  const res = await sim.nodePrepareResources(DRIVER, [one], { timeoutMs: 30000 });
  assert.equal(res.claims[one.uid].error, '');
  assert.match(drv.stderr, /"handling request failed" err="rpc error: code = Canceled/,
    'the cancelled call was answered before the next prepare was');
  // Its look-ups were withdrawn: what had reached a publisher thread
  // (4 of them) may still have gone out, nothing after that.
  await sleep(1500);
  const after = gets(emu, names) - atCancel;
  assert.ok(after <= 4, `${after} GETs for the cancelled call's claims after the cancel`);
  // And no hook ran for it.
  assert.equal(big.filter((c) => hookRuns(drv, c.name) > 0).length, 0);
});

// Rounds of `calls` concurrent prepares of the backlog's unprepared
// claims until every claim is prepared; returns figures.
async function converge({ emu, sim, port }, claims, calls, timeoutMs, maxRounds) {
  const prepared = new Set();
  let rounds = 0;
  let maxInFlight = 0;
  const sampler = setInterval(() => {
    inFlight(port).then((n) => { maxInFlight = Math.max(maxInFlight, n); }, () => {});
  }, 200);
  try {
    while (prepared.size < claims.length && rounds < maxRounds) {
      rounds++;
      const left = claims.filter((c) => !prepared.has(c.uid));
      const per = Math.ceil(left.length / calls);
      const parts = Array.from({ length: calls }, (_, i) => left.slice(i * per, (i + 1) * per)).filter((x) => x.length);
      await Promise.all(parts.map((part) => sim.nodePrepareResources(DRIVER, part, { timeoutMs }).then(
        (r) => part.forEach((c) => prepared.add(c.uid)),
        (e) => {
          // Per-claim errors: kubelet fails the call and retries it; the
          // claims that were prepared are kept (the journal has them).
          for (const c of part) if (e.response && e.response.claims[c.uid] && !e.response.claims[c.uid].error) prepared.add(c.uid);
        })));
    }
  } finally {
    clearInterval(sampler);
  }
  maxInFlight = Math.max(maxInFlight, await inFlight(port));
  return { rounds, prepared: prepared.size, maxInFlight };
}

test('a backlog converges with retries: each attempt keeps what it prepared, the journal answers it after', async (t) => {
  const env = await setup(t, '20:1');
  const claims = addClaims(env.emu, 'backlog', 60);
  const names = new Set(claims.map((c) => c.name));
  // 60 claims at 20 GET/s need 3 s of GETs; each call gets 2 s (1.6 s of
  // look-ups): no attempt can do them all.
  const r = await converge(env, claims, 4, 2000, 15);
  assert.equal(r.prepared, 60, `prepared ${r.prepared} of 60 in ${r.rounds} rounds`);
  assert.ok(r.rounds >= 2, `${r.rounds} rounds: the budget did not bind`);
  // Each claim looked up about once: a retry GETs only what the journal
  // does not have (the Go helper GETs every claim every call). Some
  // look-ups cut at a budget's end had their GET already: at most the
  // publisher's 4 threads a round.
  const n = gets(env.emu, names);
  assert.ok(n <= 60 + 4 * r.rounds, `${n} GETs for 60 claims in ${r.rounds} rounds`);
  // The hook ran for each claim once: later attempts were answered by
  // the journal.
  assert.deepEqual(claims.filter((c) => hookRuns(env.drv, c.name) !== 1).map((c) => c.name), []);
  const journal = readJournal(env.journal);
  assert.equal(claims.filter((c) => journal.claims[c.uid]).length, 60);
  // Never more prepares in flight at the nodeserver than the client had.
  assert.ok(r.maxInFlight <= 4, `${r.maxInFlight} prepares in flight, the client had 4 at most`);
  // The draining stop needs no SIGKILL.
  const st = await env.drv.stop();
  assert.equal(st.code, 0);
  assert.doesNotMatch(env.drv.stderr, /did not stop in time: SIGKILL/);
});

test('at 0.5 GET/s with 4 s deadlines every attempt prepares some', async (t) => {
  // Withdrawn look-ups must cost no token: with a token reserved for each
  // look-up waiting at a publisher thread, the first attempt prepared 2
  // and every retry none (the bucket stayed in debt past each cut).
  const env = await setup(t, '0.5:1');
  const claims = addClaims(env.emu, 'slow', 6);
  const prepared = new Set();
  const perAttempt = [];
  for (let a = 0; a < 5 && prepared.size < claims.length; a++) {
    const left = claims.filter((c) => !prepared.has(c.uid));
    const before = prepared.size;
    await env.sim.nodePrepareResources(DRIVER, left, { timeoutMs: 4000 }).then(
      () => left.forEach((c) => prepared.add(c.uid)),
      (e) => { for (const c of left) if (e.response && e.response.claims[c.uid] && !e.response.claims[c.uid].error) prepared.add(c.uid); });
    perAttempt.push(prepared.size - before);
  }
  assert.equal(prepared.size, 6, `prepared per attempt: ${perAttempt.join(', ')}`);
  assert.ok(perAttempt.every((n) => n > 0), `prepared per attempt: ${perAttempt.join(', ')}`);
  // The look-ups withdrawn at a thread while waiting for a token left
  // that wait: one GET per claim, none for a withdrawn one.
  assert.equal(gets(env.emu, new Set(claims.map((c) => c.name))), 6);
});

test('a stop at 0.25 GET/s with look-ups waiting for tokens needs no SIGKILL', async (t) => {
  // 8 look-ups, the publisher's 4 threads each waiting for a token (one
  // per 4 s); the call is cut at its 3 s deadline, the drain ends, and
  // the publisher is stopped while, with reserved tokens, its threads
  // would still sleep 5 s or more.
  const env = await setup(t, '0.25:1');
  const more = addClaims(env.emu, 'queued', 8);
  const pending = env.sim.nodePrepareResources(DRIVER, more, { timeoutMs: 3000 }).catch(() => {});
  await until(() => gets(env.emu, new Set(more.map((c) => c.name))) >= 1, 10000);
  const st = await env.drv.stop();
  await pending;
  assert.equal(st.code, 0);
  assert.doesNotMatch(env.drv.stderr, /did not stop in time: SIGKILL/);
  assert.match(env.drv.stderr, /publisher\] stopping/);
  assert.match(env.drv.stderr, /broker\] publisher exited/);
});

test('an unprepare is answered while 8 prepares wait for their look-ups', async (t) => {
  const { emu, sim } = await setup(t, '1:1');
  const [first] = addClaims(emu, 'first', 1);
  await sim.nodePrepareResources(DRIVER, [first], { timeoutMs: 30000 });
  const order = [];
  const stuck = Array.from({ length: 8 }, (_, k) => {
    const cs = addClaims(emu, `stuck${k}`, 40);
    return sim.nodePrepareResources(DRIVER, cs, { timeoutMs: 8000 }).then(() => order.push('prepare'), () => order.push('prepare'));
  });
  // All 8 started: their look-ups trickle at 1 GET/s.
  await until(() => emu.requests({ method: 'GET', path: '/resourceclaims/stuck' }).length >= 2, 20000);
  const res = await sim.nodeUnprepareResources(DRIVER, [first], { timeoutMs: 20000 });
  order.push('unprepare');
  assert.equal(res.claims[first.uid].error, '');
  assert.deepEqual(order, ['unprepare'], 'the unprepare was answered before any of the stuck prepares');
  assert.ok(emu.requests({ method: 'GET', path: '/resourceclaims/stuck' }).length < 8 * 40);
  await Promise.all(stuck);
});

test('soak: 1,000 new claims in 4 calls, 45 s deadlines, 5 GET/s, retried (KP_SOAK=1)', { skip: !process.env.KP_SOAK }, async (t) => {
  const env = await setup(t, '5:10');
  const claims = addClaims(env.emu, 'soak', 1000);
  const names = new Set(claims.map((c) => c.name));
  const t0 = Date.now();
  const r = await converge(env, claims, 4, 45000, 40);
  const n = gets(env.emu, names);
  const t1 = Date.now();
  const st = await env.drv.stop();
  console.log(`# soak: ${r.prepared}/1000 prepared in ${r.rounds} rounds, ${((t1 - t0) / 1000).toFixed(0)} s, ${n} GETs, ` +
    `max ${r.maxInFlight} prepares in flight; stop ${st.code}, SIGKILL ${/SIGKILL/.test(env.drv.stderr)}`);
  assert.equal(r.prepared, 1000);
  assert.ok(r.maxInFlight <= 4);
  assert.equal(st.code, 0);
  assert.doesNotMatch(env.drv.stderr, /did not stop in time: SIGKILL/);
});
