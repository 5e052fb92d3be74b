'use strict';
// connections.test.js - the connection limits of the two gRPC sockets
// (rpc/accept.c, issue 10): the per-socket cap, the handshake timeout for
// the HTTP/2 client preface, what stays open, and accept4() out of fds.
//
//   KP_BUILD=build node --test tests/e2e/connections.test.js
//
// Raw unix connections stand in for a flood; kubelet-sim is the kubelet.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const { randomUUID } = require('node:crypto');
const { KubeletSim, proto } = require('../kubelet-sim');
const { makeRoot, TestDriver, roles, until, sleep, TESTDRIVER } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const CAP = 8;
const HANDSHAKE_MS = 1000;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);	// empty SETTINGS
const DRA_PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const GET_INFO = '/pluginregistration.Registration/GetInfo';
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

async function setup(t, { args = [], driverOpts = {}, sim = true } = {}) {
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, ['--max-connections', String(CAP),
    '--handshake-timeout-ms', String(HANDSHAKE_MS), ...args], driverOpts);
  const conns = [];
  t.after(async () => {
    for (const c of conns) c.sock.destroy();
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  const out = { root, drv, conns };
  if (sim) {
    out.sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
    t.after(() => out.sim.stop());
  }
  return out;
}

// A raw connection that sends `data` (or nothing) and records when the
// server closed it (EOF), relative to when it connected.
function raw(path, data, conns) {
  const c = { t0: Date.now(), closedAfter: null, got: 0 };
  c.sock = net.connect(path, () => {
    c.t0 = Date.now();
    if (data) c.sock.write(data);
  });
  c.sock.on('data', (d) => { c.got += d.length; });
  c.sock.on('error', () => {});
  c.closed = new Promise((resolve) => c.sock.on('close', () => {
    c.closedAfter = Date.now() - c.t0;
    resolve(c.closedAfter);
  }));
  conns.push(c);
  return c;
}

const connected = (c) => new Promise((resolve) => {
  if (!c.sock.connecting) resolve();
  else c.sock.once('connect', resolve);
});

function fdCount(pid) {
  return fs.readdirSync(`/proc/${pid}/fd`).length;
}

async function prepare(sim, name) {
  const c = claim(name);
  const res = await sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 5000 });
  assert.equal(res.claims[c.uid].devices[0].device_name, name);
}

// Prepare on a fresh connection of its own.
async function prepareNewConn(root, name) {
  const c = claim(name);
  const req = proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'), { claims: [c] });
  const { callRaw } = require('../kubelet-sim');
  return callRaw(root.draSock, DRA_PREPARE, req, 3000);
}

test('silent flood of cap+50: over the cap closed at once, the rest after the handshake timeout; the established kubelet connection keeps serving; fds bounded', async (t) => {
  const { root, drv, sim, conns } = await setup(t);
  await sim.waitForDriver(DRIVER);
  await prepare(sim, 'before');	// the sim's one connection is established
  const ns = roles(drv.proc.pid).nodeserver;
  const fdsBefore = fdCount(ns);

  const flood = Array.from({ length: CAP + 50 }, () => raw(root.draSock, null, conns));
  await Promise.all(flood.map(connected));
  let fdsMax = 0;
  const sampler = setInterval(() => { fdsMax = Math.max(fdsMax, fdCount(ns)); }, 10);
  t.after(() => clearInterval(sampler));
  // During the flood: the connection opened before it still serves.
  await prepare(sim, 'during');
  await Promise.all(flood.map((c) => c.closed));
  clearInterval(sampler);

  const fast = flood.filter((c) => c.closedAfter < HANDSHAKE_MS / 2);
  const slow = flood.filter((c) => c.closedAfter >= HANDSHAKE_MS / 2);
  // The sim holds one slot: CAP - 1 were pending, the rest refused.
  assert.equal(fast.length, 50 + 1, `closed at once: ${flood.map((c) => c.closedAfter)}`);
  assert.equal(slow.length, CAP - 1);
  for (const c of slow) {
    assert.ok(c.closedAfter >= HANDSHAKE_MS - 200 && c.closedAfter < HANDSHAKE_MS + 1500,
      `pending connection closed after ${c.closedAfter} ms`);
    assert.equal(c.got, 0, 'a connection without preface got bytes');
  }
  assert.ok(fdsMax <= fdsBefore + CAP + 2, `nodeserver fds ${fdsBefore} -> max ${fdsMax}`);
  t.diagnostic(`nodeserver fds ${fdsBefore}, at most ${fdsMax} during the flood; pending closed after ` +
    `${Math.min(...slow.map((c) => c.closedAfter))}..${Math.max(...slow.map((c) => c.closedAfter))} ms`);
  await until(() => fdCount(ns) <= fdsBefore, 3000);
  await drv.stderrMatch(/nodeserver\] nodeserver: connection refused: 8 connections open, 7 of them in their handshake \(kp_grpc_max_connections 8; \d+ refused so far\)/);
  await drv.stderrMatch(/nodeserver: connection closed: no HTTP\/2 client preface within 1000 ms/);
  // Rate-limited: not one line per refused connection.
  const lines = drv.stderr.split('\n').filter((l) => /nodeserver: connection refused/.test(l));
  assert.ok(lines.length <= 3, `${lines.length} refusal lines`);
  await prepare(sim, 'after');
  const fresh = await prepareNewConn(root, 'fresh');
  assert.equal(fresh.code, 0, fresh.details);
});

test('with the cap taken by pending connections a new kubelet connection is refused, and succeeds (retried) once they time out', async (t) => {
  const { root, conns } = await setup(t, { sim: false });
  const flood = Array.from({ length: CAP + 50 }, () => raw(root.draSock, null, conns));
  await Promise.all(flood.map(connected));
  const t0 = Date.now();
  // Refused while the CAP pending ones wait for their preface.
  const early = await prepareNewConn(root, 'early');
  assert.notEqual(early.code, 0, 'a connection over the cap was served');
  assert.ok(Date.now() - t0 < HANDSHAKE_MS, 'the refusal took too long to test the window');
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);	// the registrar's socket has its own cap
  const c = claim('late');
  const res = await until(() => sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 3000 })
    .then((x) => x, () => null), 15000, 100);
  assert.equal(res.claims[c.uid].devices[0].device_name, 'late');
  assert.ok(Date.now() - t0 >= HANDSHAKE_MS - 100, `served after ${Date.now() - t0} ms, before the pending ones timed out`);
  await Promise.all(flood.map((x) => x.closed));
});

test('connections that sent the preface stay open idle up to the cap; the next is refused while they are younger than the handshake timeout; a closed one frees its slot; established ones keep serving', async (t) => {
  const { root, sim, conns } = await setup(t);
  await sim.waitForDriver(DRIVER);
  await prepare(sim, 'first');	// 1 slot
  const hello = Buffer.concat([PREFACE, SETTINGS]);
  const idle = Array.from({ length: CAP - 1 }, () => raw(root.draSock, hello, conns));
  await Promise.all(idle.map(connected));
  await until(() => idle.every((c) => c.got > 0), 3000);	// the server's SETTINGS
  const over = raw(root.draSock, hello, conns);
  const overAfter = await over.closed;
  assert.ok(overAfter < HANDSHAKE_MS / 2, `the 9th closed after ${overAfter} ms`);
  // Well past the handshake timeout the idle ones are still open.
  await sleep(HANDSHAKE_MS * 2);
  assert.ok(idle.every((c) => c.closedAfter === null), 'an idle established connection was closed');
  await prepare(sim, 'second');
  // Close one: the core closes its end, the sweep notices, a slot is free.
  idle[0].sock.destroy();
  await idle[0].closed;
  const next = await until(async () => {
    const c = raw(root.draSock, hello, conns);
    await sleep(300);
    if (c.closedAfter === null) return c;
    return null;
  }, 5000, 50);
  await sleep(HANDSHAKE_MS * 1.5);
  assert.equal(next.closedAfter, null, 'the connection in the freed slot was closed');
  await prepare(sim, 'third');
});

// Issue 28, finding 7: the cap taken by connections that sent the
// preface and then nothing (handed to gRPC, so the handshake timeout no
// longer applies; the keepalive would give up on them after about 80 s).
test('the cap taken by connections silent after the preface: past the handshake timeout a new kubelet connection takes the oldest one\'s slot; a connection that carried a call keeps its own', async (t) => {
  const { root, drv, conns } = await setup(t, { sim: false });
  const { newClient, rawUnary } = require('../kubelet-sim/grpc-util');
  // kubelet's connections (grpc-js), each kept open: each needs a slot.
  const kubelet = async (name) => {
    const c = newClient(root.draSock);
    t.after(() => c.close());
    const req = proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'), { claims: [claim(name)] });
    const r = await rawUnary(c, DRA_PREPARE, req, 5000);
    assert.equal(r.code, 0, r.details);
    return c;
  };
  // The first kubelet connection is the oldest, and it made a call.
  const first = await kubelet('first');
  const silent = Array.from({ length: CAP - 1 }, () => raw(root.draSock, PREFACE, conns));
  await Promise.all(silent.map(connected));
  await until(() => silent.every((c) => c.got > 0), 5000);	// handed off: the server's SETTINGS came
  const closed = () => silent.filter((c) => c.closedAfter !== null).length;
  // (Younger than the handshake timeout they keep their slots: the test
  // above.)
  await sleep(HANDSHAKE_MS + 200);
  // A new connection (a restarted kubelet's, say) takes the slot of the
  // oldest silent one, not the first kubelet connection's.
  await kubelet('second');
  await until(() => closed() === 1, 5000);
  await kubelet('third');
  await until(() => closed() === 2, 5000);
  const req = proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'), { claims: [claim('first-again')] });
  assert.equal((await rawUnary(first, DRA_PREPARE, req, 5000)).code, 0);
  await sleep(300);
  assert.equal(closed(), 2, 'one silent connection given up per new connection');
  await drv.stderrMatch(/nodeserver: connection closed: no call in \d+ ms, its slot taken by a new one \(kp_grpc_max_connections 8; 1 so far\)/);
  assert.doesNotMatch(drv.stderr, /Sanitizer|runtime error:/);
});

test('garbage instead of the preface is closed at once; a partial preface waits for the timeout', async (t) => {
  const { root, drv, sim, conns } = await setup(t);
  await sim.waitForDriver(DRIVER);
  const garbage = raw(root.draSock, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', conns);
  const wrongTail = raw(root.draSock, Buffer.concat([PREFACE.subarray(0, 10), Buffer.from('xxxxxxxxxxxxxx')]), conns);
  const partial = raw(root.draSock, PREFACE.subarray(0, 10), conns);
  assert.ok(await garbage.closed < 300, `garbage closed after ${garbage.closedAfter} ms`);
  assert.ok(await wrongTail.closed < 300, `bad tail closed after ${wrongTail.closedAfter} ms`);
  const p = await partial.closed;
  assert.ok(p >= HANDSHAKE_MS - 200 && p < HANDSHAKE_MS + 1500, `partial closed after ${p} ms`);
  // A preface in two writes is accepted.
  const split = raw(root.draSock, PREFACE.subarray(0, 7), conns);
  await connected(split);
  await sleep(200);
  split.sock.write(Buffer.concat([PREFACE.subarray(7), SETTINGS]));
  await until(() => split.got > 0, 3000);
  await sleep(HANDSHAKE_MS * 1.5);
  assert.equal(split.closedAfter, null, 'a preface sent in two parts was closed');
  await drv.stderrMatch(/nodeserver: connection closed: not an HTTP\/2 client preface/);
  await prepare(sim, 'still');
});

test('separate sockets, separate caps: GetInfo works under a DRA flood, prepare under a registrar flood', async (t) => {
  const { root, drv, sim, conns } = await setup(t);
  await sim.waitForDriver(DRIVER);
  const draFlood = Array.from({ length: CAP + 50 }, () => raw(root.draSock, null, conns));
  await Promise.all(draFlood.map(connected));
  const info = await sim.callRaw(root.regSock, GET_INFO, Buffer.alloc(0), 3000);
  assert.equal(info.code, 0, info.details);
  assert.equal(proto.decode('pluginregistration.PluginInfo', info.buffer).name, DRIVER);
  await Promise.all(draFlood.map((c) => c.closed));

  await prepare(sim, 'before');
  const regFlood = Array.from({ length: CAP + 50 }, () => raw(root.regSock, null, conns));
  await Promise.all(regFlood.map(connected));
  await prepare(sim, 'during');
  const fresh = await prepareNewConn(root, 'fresh');
  assert.equal(fresh.code, 0, fresh.details);
  const refused = await sim.callRaw(root.regSock, GET_INFO, Buffer.alloc(0), 500);
  assert.notEqual(refused.code, 0, 'the registrar served over its cap');
  await Promise.all(regFlood.map((c) => c.closed));
  await drv.stderrMatch(/registrar\] registrar: connection refused: \d+ connections open/);
  const again = await until(() => sim.callRaw(root.regSock, GET_INFO, Buffer.alloc(0), 1000)
    .then((r) => (r.code === 0 ? r : null)), 5000, 100);
  assert.equal(again.code, 0);
});

test('accept4 out of fds (RLIMIT_NOFILE): backs off without spinning, logs rate-limited, serves again after', async (t) => {
  // prlimit as the driver's wrapper: the supervisor and children inherit
  // the limit (the container lacks CAP_SYS_RESOURCE for prlimit --pid on
  // another uid). A high cap, so the fd limit is what stops accept4().
  const NOFILE = 64;
  const { root, drv, sim, conns } = await setup(t, {
    args: ['--max-connections', '1000'],
    driverOpts: { binary: 'prlimit', prefixArgs: [`--nofile=${NOFILE}:${NOFILE}`, TESTDRIVER] },
  });
  await sim.waitForDriver(DRIVER);
  await prepare(sim, 'before');
  const ns = roles(drv.proc.pid).nodeserver;
  const limit = fs.readFileSync(`/proc/${ns}/limits`, 'utf8');
  assert.match(limit, new RegExp(`Max open files\\s+${NOFILE}\\s+${NOFILE}`));
  const cpu = () => {
    const f = fs.readFileSync(`/proc/${ns}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(f[11]) + Number(f[12]);	// utime + stime, ticks
  };
  const flood = Array.from({ length: NOFILE + 20 }, () => raw(root.draSock, null, conns));
  await Promise.all(flood.map(connected));
  await drv.stderrMatch(/nodeserver: accept4: Too many open files \(not accepting for 100 ms\)/);
  const c0 = cpu();
  await sleep(2000);
  const ticks = cpu() - c0;
  assert.ok(ticks < 50, `nodeserver used ${ticks} ticks in 2 s while out of fds`);
  t.diagnostic(`out of fds: ${ticks} ticks of CPU in 2 s`);
  const lines = drv.stderr.split('\n').filter((l) => /nodeserver: accept4: Too many open files/.test(l));
  assert.ok(lines.length <= 5, `${lines.length} EMFILE lines`);
  assert.ok(fdCount(ns) <= NOFILE);
  // The established connection works throughout; once the flood is gone
  // new connections are served again.
  await prepare(sim, 'during');
  for (const c of flood) c.sock.destroy();
  const res = await until(() => prepareNewConn(root, 'after').then((r) => (r.code === 0 ? r : null)), 10000, 200);
  assert.equal(res.code, 0);
});
