'use strict';
// chaos.test.js - a child's crash is invisible to kubelet (issue 15).
//
// While the kubelet simulator sends a continuous stream of Prepare and
// Unprepare calls (each Prepare needs a claim look-up at the API-server
// emulator) and the publisher keeps syncing slices, a random child is
// SIGKILLed KILLS times at random moments. Asserted:
//   - the supervisor never died (same pid, alive, at the end);
//   - the socket files were never absent: inotify (fs.watch) on both
//     directories sees no event for either name, and a 2 ms lstat poll
//     never misses one;
//   - no zombie lingers (a child seen as Z for 2 s or more) and none is
//     left at the end;
//   - the supervisor's fd count is the same after as before;
//   - no call failed except those in flight on a nodeserver that was
//     killed (UNAVAILABLE; "in flight" includes a call issued before the
//     client saw the connection die), at most one a worker per kill, and
//     each of those succeeded on retry;
//   - every Prepare's hook got the claim's allocation (the look-up never
//     failed), and every claim ended up prepared and unprepared (no data
//     lost);
//   - slices converge to the last published resources, no duplicates;
//   - the registration stayed "registered" (kp_registration_status polled,
//     no deregistration seen by the simulator).
// Figures (kills per role, failed calls by kind, recovery times p50/p99)
// are printed as test diagnostics.
//
//   KP_BUILD=build node --test tests/e2e/chaos.test.js
//   KP_CHAOS_KILLS=20 shortens it; KP_CHAOS_FIGURES=<file> writes the
//   figures as JSON, KP_CHAOS_DEBUG=<file> every call, kill and the log.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const { makeRoot, TestDriver, roles, until, sleep, isAlive, watchSockets } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const SELECTOR = `spec.driver=${DRIVER},spec.nodeName=${NODE}`;
const KILLS = Number(process.env.KP_CHAOS_KILLS || 50);
const WORKERS = 3;
const DEVICES = 150;	// per pool: 2 slices each
const POOLS = 2;
const UNAVAILABLE = 14;

function fdCount(pid) {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

// Zombies among pid's children: [pid, ...].
function zombies(pid) {
  try {
    return execFileSync('ps', ['-o', 'pid=,stat=', '--ppid', String(pid)]).toString()
      .trim().split('\n').filter((l) => /\sZ/.test(l)).map((l) => Number(l.trim().split(/\s+/)[0]));
  } catch {
    return [];	// no children at this instant
  }
}

function pct(xs, p) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

test(`chaos: ${KILLS} random SIGKILLs of children under kubelet load and slice syncs`, async (t) => {
  const root = makeRoot(DRIVER);
  const tokenFile = path.join(root.dir, 'token');
  const emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  // A higher client-side rate limit than client-go's 5 QPS: claim
  // look-ups and slice writes of the whole run share it.
  // -v 3: no call log (V(4)). The ALLOC lines counted below come through
  // the supervisor's log flood guard (200 lines a second per child); with
  // two call-log lines per call on top, a fast nodeserver went past it and
  // lines were dropped.
  const drv = new TestDriver(root, ['--kubeconfig', kc, '--node-name', NODE, '--kube-qps', '50:100', '-v', '3']);
  let sim = null;
  t.after(async () => {
    if (sim) await sim.stop();
    drv.kill();
    await drv.exited;
    await emu.stop();
    root.cleanup();
  });
  await drv.ready();
  sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  let registered = 0;
  let deregistered = 0;
  sim.on('registered', () => registered++);
  sim.on('deregistered', () => deregistered++);
  await sim.waitForDriver(DRIVER);

  let tag = 0;
  const publish = async () => {
    const l = await drv.command(`publish ${DEVICES} ${POOLS} t${++tag}`, 'publish ');
    assert.match(l, /^publish KP_OK/, l);
  };
  await publish();
  await until(() => emu.getSlices({ fieldSelector: SELECTOR }).length === 4, 15000, 100);

  const r0 = roles(drv.proc.pid);
  assert.ok(r0.supervisor && r0.nodeserver && r0.registrar && r0.publisher, JSON.stringify(r0));
  const sup = r0.supervisor;
  // Settle: the first calls open the connections every later call uses.
  const warm = { namespace: 'default', name: 'warm', uid: randomUUID() };
  emu.addClaim({ ...warm, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-0' }] } });
  await sim.nodePrepareResources(DRIVER, [warm], { timeoutMs: 10000 });
  await sim.nodeUnprepareResources(DRIVER, [warm], { timeoutMs: 10000 });
  const supFds0 = fdCount(sup);

  // --- watchers --------------------------------------------------------
  const sockEvents = [];
  const watchers = [root.registry, path.dirname(root.draSock)].map((d) => fs.watch(d, (ev, name) => {
    if (name === path.basename(root.regSock) || name === path.basename(root.draSock)) sockEvents.push({ ev, name, at: Date.now() });
  }));
  const stopPoll = watchSockets([root.regSock, root.draSock]);
  const zombieSeen = new Map();	// pid -> first seen
  let lingering = [];
  let supDied = false;
  let regBad = [];
  let stopping = false;
  const sampler = (async () => {
    while (!stopping) {
      if (!isAlive(sup)) supDied = true;
      const z = zombies(sup);
      const now = Date.now();
      for (const p of z) if (!zombieSeen.has(p)) zombieSeen.set(p, now);
      for (const [p, at] of zombieSeen) {
        if (!z.includes(p)) zombieSeen.delete(p);
        else if (now - at >= 2000 && !lingering.includes(p)) lingering.push(p);
      }
      await sleep(100);
    }
  })();
  const statusPoll = (async () => {
    while (!stopping) {
      const st = await drv.status();
      if (st.state !== 1) regBad.push(st);
      await sleep(500);
    }
  })();

  // --- kills -----------------------------------------------------------
  const kills = [];	// { role, pid, at, logAt, recoveredMs }
  const killer = (async () => {
    for (let i = 0; i < KILLS; i++) {
      await sleep(400 + Math.random() * 1400);
      const r = roles(drv.proc.pid);
      const live = ['nodeserver', 'registrar', 'publisher'].filter((x) => r[x]);
      if (live.length === 0) { i--; continue; }
      const role = live[Math.floor(Math.random() * live.length)];
      const k = { role, pid: r[role], at: Date.now(), logAt: drv.stderr.length, recoveredMs: null };
      try { process.kill(k.pid, 'SIGKILL'); } catch { i--; continue; }
      kills.push(k);
    }
  })();
  // Recovery: the supervisor logs "<role> ready, pid N (restarted)".
  const recovery = (async () => {
    for (;;) {
      const open = kills.filter((k) => k.recoveredMs === null);
      for (const k of open) {
        const re = new RegExp(`broker\\] ${k.role} ready, pid (\\d+) \\(restarted\\)`, 'g');
        re.lastIndex = k.logAt;
        const text = drv.stderr;
        let m;
        while ((m = re.exec(text)) !== null) {
          if (Number(m[1]) !== k.pid) { k.recoveredMs = Date.now() - k.at; break; }
        }
      }
      if (stopping && kills.every((k) => k.recoveredMs !== null)) return;
      await sleep(10);
    }
  })();

  // --- load ------------------------------------------------------------
  const calls = [];	// { method, start, end, code, message, claim }
  const failures = [];	// failed attempts, with whether a nodeserver kill overlapped
  const retries = [];	// ms from the first failure to success
  const claims = [];
  async function call(method, c) {
    let firstFail = null;
    for (let attempt = 0; ; attempt++) {
      const e = { method, start: Date.now(), end: 0, code: 0, message: '', claim: c.name };
      try {
        await sim[method === 'prepare' ? 'nodePrepareResources' : 'nodeUnprepareResources'](DRIVER, [c], { timeoutMs: 15000 });
      } catch (err) {
        e.code = err.code === undefined ? -1 : err.code;
        e.message = err.message;
      }
      e.end = Date.now();
      calls.push(e);
      if (e.code === 0) {
        if (firstFail !== null) retries.push(e.end - firstFail);
        return;
      }
      failures.push(e);
      if (firstFail === null) firstFail = e.start;
      if (attempt >= 50) throw new Error(`${method} ${c.name}: still failing: ${e.message}`);
      await sleep(100);
    }
  }
  let nclaim = 0;
  const workers = Array.from({ length: WORKERS }, async () => {
    while (!stopping) {
      const i = nclaim++;
      const c = { namespace: 'default', name: `chaos-${i}`, uid: randomUUID() };
      emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: `dev-${i % DEVICES}` }] } });
      claims.push(c);
      await call('prepare', c);
      await call('unprepare', c);
    }
  });
  const publisher = (async () => {
    while (!stopping) {
      await sleep(1500 + Math.random() * 1000);
      if (!stopping) await publish();
    }
  })();

  await killer;
  stopping = true;
  await Promise.all([...workers, publisher, statusPoll, sampler]);
  await until(() => kills.every((k) => k.recoveredMs !== null), 20000, 50);
  await recovery;

  // --- convergence -----------------------------------------------------
  const finalTag = `t${tag}`;
  const slices = await until(() => {
    const s = emu.getSlices({ fieldSelector: SELECTOR });
    if (s.length !== 4) return null;
    for (const x of s) {
      for (const d of x.spec.devices) {
        if (d.attributes['example.com/tag'].string !== finalTag) return null;
      }
    }
    return s;
  }, 30000, 200);
  await sleep(500);
  const pollResult = stopPoll();
  for (const w of watchers) w.close();

  const byPool = {};
  for (const s of slices) {
    const p = s.spec.pool;
    (byPool[p.name] ||= { gens: new Set(), counts: new Set(), devices: [] });
    byPool[p.name].gens.add(p.generation);
    byPool[p.name].counts.add(p.resourceSliceCount);
    byPool[p.name].devices.push(...s.spec.devices.map((d) => d.name));
  }
  assert.deepEqual(Object.keys(byPool).sort(), ['pool-0', 'pool-1']);
  for (const [name, p] of Object.entries(byPool)) {
    assert.equal(p.gens.size, 1, `${name}: slices of several generations ${[...p.gens]}`);
    assert.deepEqual([...p.counts], [2], `${name}: resourceSliceCount`);
    assert.equal(p.devices.length, DEVICES, `${name}: ${p.devices.length} devices`);
    assert.equal(new Set(p.devices).size, DEVICES, `${name}: a device published twice`);
  }

  await until(() => zombies(sup).length === 0, 5000, 100);
  const supFds1 = await until(() => {
    const n = fdCount(sup);
    return n <= supFds0 ? n : null;
  }, 5000, 100).catch(() => fdCount(sup));

  // --- figures ---------------------------------------------------------
  const nsKills = kills.filter((k) => k.role === 'nodeserver');
  // A failed call "in flight on a killed nodeserver": a nodeserver kill
  // came between its start and its end, or shortly before its start:
  // grpc-js learns that a connection died from its event loop, which this
  // test's own work (the kills' /proc walks, the samplers) delays, so a
  // call issued in between still goes out on the dead connection and is
  // dropped (debug runs: calls that began 4 to 44 ms after the kill; CI
  // runs saw more). A kill can fail at most the call each worker has on
  // that connection, which the count below bounds.
  const KILL_LAG_MS = 1000;
  const inFlight = (e) => nsKills.some((k) => k.at >= e.start - KILL_LAG_MS && k.at <= e.end);
  const unexplained = failures.filter((e) => !(e.code === UNAVAILABLE && inFlight(e)));
  const kinds = {};
  for (const e of failures) {
    const kind = `${e.method} code ${e.code}${inFlight(e) ? ' (nodeserver killed in flight)' : ''}`;
    kinds[kind] = (kinds[kind] || 0) + 1;
  }
  const perRole = {};
  for (const k of kills) perRole[k.role] = (perRole[k.role] || 0) + 1;
  const rec = (role) => {
    const xs = kills.filter((k) => !role || k.role === role).map((k) => k.recoveredMs);
    return `p50 ${pct(xs, 50)} ms, p99 ${pct(xs, 99)} ms`;
  };
  const alloc = claims.filter((c) => new RegExp(`ALLOC default/${c.name} results=1 r:${NODE}/`).test(drv.stderr)).length;
  const figures = {
    kills: kills.length, perRole,
    calls: calls.length, prepared: claims.length, failedCalls: failures.length, failedByKind: kinds,
    failedPerNodeserverKill: nsKills.length ? (failures.length / nsKills.length).toFixed(2) : 0,
    retryToSuccess: `p50 ${pct(retries, 50)} ms, p99 ${pct(retries, 99)} ms`,
    recovery: rec(), recoveryByRole: Object.fromEntries(['nodeserver', 'registrar', 'publisher'].map((r) => [r, rec(r)])),
    supervisorFds: `${supFds0} -> ${supFds1}`, socketSamples: pollResult.samples,
    allocations: `${alloc}/${claims.length}`,
  };
  if (process.env.KP_CHAOS_DEBUG) fs.writeFileSync(process.env.KP_CHAOS_DEBUG, JSON.stringify({ calls, kills, stderr: drv.stderr }));
  t.diagnostic(`chaos figures: ${JSON.stringify(figures)}`);
  if (process.env.KP_CHAOS_FIGURES) fs.writeFileSync(process.env.KP_CHAOS_FIGURES, JSON.stringify(figures, null, 2));

  // --- assertions ------------------------------------------------------
  assert.equal(kills.length, KILLS);
  assert.ok(!supDied && isAlive(sup), 'the supervisor died');
  assert.equal(roles(drv.proc.pid).supervisor, sup, 'another supervisor');
  assert.deepEqual(sockEvents, [], 'inotify saw a socket file change');
  assert.equal(pollResult.missing, 0, `a socket file was missing in ${pollResult.missing} of ${pollResult.samples} samples`);
  assert.deepEqual(lingering, [], 'zombies lingered');
  assert.ok(supFds1 <= supFds0, `supervisor fds grew: ${supFds0} -> ${supFds1}`);
  assert.deepEqual(unexplained.map((e) => `${e.method} ${e.claim}: ${e.message}`), [],
    'calls failed that were not in flight on a killed nodeserver');
  assert.ok(failures.length <= WORKERS * nsKills.length,
    `${failures.length} failed calls for ${nsKills.length} nodeserver kills and ${WORKERS} workers: more than one call a worker per kill`);
  assert.equal(alloc, claims.length, 'a hook ran without its claim\'s allocation');
  assert.deepEqual(regBad, [], 'the registration status changed');
  assert.equal(deregistered, 0, 'kubelet saw a deregistration');
  assert.equal(registered, 1, 'kubelet registered the driver again');
  assert.doesNotMatch(drv.stderr, /publisher not running|claim look-ups rate-limited/);
  // A healthy plugin after all that: a call on a new claim works.
  const after = { namespace: 'default', name: 'after', uid: randomUUID() };
  emu.addClaim({ ...after, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-1' }] } });
  await sim.nodePrepareResources(DRIVER, [after], { timeoutMs: 15000 });
});
