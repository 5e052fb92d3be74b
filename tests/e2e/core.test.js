'use strict';
// End-to-end tests of the multi-process core: a driver linked against
// libkubeletplugin (build/tests/kp_testdriver) against the kubelet
// simulator (@grpc/grpc-js, an independent gRPC implementation).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { spawn } = require('node:child_process');
const grpc = require('@grpc/grpc-js');
const { KubeletSim, proto } = require('../kubelet-sim');
const {
  makeRoot, TestDriver, roles, until, sleep, watchSockets, isAlive, procStatus, ROOT,
  childLines,
} = require('./lib/plugin');

const DRIVER = 'test.example.com';
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

// Starts a plugin and a simulator; t.after tears both down.
async function setup(t, { args = [], version = '1.34', simOpts = {}, env = {} } = {}) {
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, args, { env });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, version, retryInitialMs: 100, ...simOpts }).start();
  t.after(() => sim.stop());
  return { root, drv, sim };
}

test('registers with kubelet 1.34 and serves v1', async (t) => {
  const { drv, sim, root } = await setup(t);
  const d = await sim.waitForDriver(DRIVER);
  assert.equal(d.api, 'v1');
  assert.deepEqual(d.supportedVersions, ['v1.DRAPlugin', 'v1beta1.DRAPlugin',
    'v1.DRAResourceHealth', 'v1alpha1.DRAResourceHealth']);
  assert.equal(d.endpoint, root.draSock);
  await until(async () => (await drv.status()).state === 1);
  const c = claim('c1');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  const dev = res.claims[c.uid].devices[0];
  assert.equal(dev.pool_name, 'pool-a');
  assert.equal(dev.device_name, 'c1');
  assert.deepEqual(dev.cdi_device_ids, [`${DRIVER}/test=c1`]);
  assert.deepEqual(dev.request_names, ['req-0']);
  assert.equal(dev.share_id, undefined, 'share_id absent when the hook gave none');
  const un = await sim.nodeUnprepareResources(DRIVER, [c]);
  assert.deepEqual(Object.keys(un.claims), [c.uid]);
});

test('kubelet 1.32 picks v1beta1; share_id is not on the v1beta1 wire', async (t) => {
  const { sim } = await setup(t, { version: '1.32', args: ['--share-id', 'abc'] });
  const d = await sim.waitForDriver(DRIVER);
  assert.equal(d.api, 'v1beta1');
  const c = claim('c2');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices[0].device_name, 'c2');
  assert.equal(res.claims[c.uid].devices[0].share_id, undefined);
});

test('v1 carries share_id when the hook sets it', async (t) => {
  const { sim } = await setup(t, { args: ['--share-id', 'abc'] });
  await sim.waitForDriver(DRIVER);
  const c = claim('c3');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices[0].share_id, 'abc');
});

test('kubelet 1.31 needs v1alpha4: rejected without, served with it', async (t) => {
  await t.test('without v1alpha4', async (t2) => {
    const { drv, sim } = await setup(t2, { version: '1.31' });
    const ev = await sim.waitFor('registrationFailed', () => true, 10000);
    assert.match(String(ev.message || ev.error || JSON.stringify(ev)), /version/i);
    const st = await until(async () => {
      const s = await drv.status();
      return s.state === 2 ? s : null;
    });
    assert.match(st.error, /plugin validation failed/);
  });
  await t.test('with v1alpha4', async (t2) => {
    const { sim } = await setup(t2, { version: '1.31', args: ['--v1alpha4'] });
    const d = await sim.waitForDriver(DRIVER);
    assert.equal(d.api, 'v1alpha4');
    assert.ok(d.supportedVersions.includes('1.0.0'));
    const c = claim('c4');
    const res = await sim.nodePrepareResources(DRIVER, [c]);
    assert.equal(res.claims[c.uid].devices[0].device_name, 'c4');
    await sim.nodeUnprepareResources(DRIVER, [c]);
  });
});

test('per-claim errors, hook failures and batches', async (t) => {
  const { sim } = await setup(t, { args: ['--fail-claim', 'bad'] });
  await sim.waitForDriver(DRIVER);
  const good = claim('good');
  const bad = claim('bad');
  const other = claim('other');
  await assert.rejects(sim.nodePrepareResources(DRIVER, [good, bad, other]),
    /NodePrepareResources failed for claim default\/bad: test claim failure/);
  // The raw response has exactly one entry per claim, devices for the others.
  const d = sim.getDriver(DRIVER);
  const req = proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'), { claims: [good, bad, other] });
  const raw = await sim.callRaw(d.endpoint, `${d.servicePrefix}NodePrepareResources`, req, 5000);
  assert.equal(raw.code, grpc.status.OK);
  const resp = proto.decode(proto.typeName('v1', 'NodePrepareResourcesResponse'), raw.buffer);
  assert.deepEqual(Object.keys(resp.claims).sort(), [good.uid, bad.uid, other.uid].sort());
  assert.equal(resp.claims[bad.uid].error, 'test claim failure');
  assert.equal(resp.claims[good.uid].devices.length, 1);
});

test('a hook failure is a gRPC error with the hook message', async (t) => {
  const { sim } = await setup(t, { args: ['--hook-fail'] });
  await sim.waitForDriver(DRIVER);
  await assert.rejects(sim.nodePrepareResources(DRIVER, [claim('x')]),
    /NodePrepareResources failed: .*prepare resource claims: test hook failure/);
});

test('unknown methods, malformed and oversized requests; the server stays up', async (t) => {
  const { sim } = await setup(t);
  const d = await sim.waitForDriver(DRIVER);
  const unk = await sim.callRaw(d.endpoint, '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NoSuchMethod', Buffer.alloc(0), 5000);
  assert.equal(unk.code, grpc.status.UNIMPLEMENTED);
  const alpha = await sim.callRaw(d.endpoint, '/v1alpha3.Node/NodePrepareResources', Buffer.alloc(0), 5000);
  assert.equal(alpha.code, grpc.status.UNIMPLEMENTED, 'v1alpha4 is off by default');
  const bad = await sim.callRaw(d.endpoint, `${d.servicePrefix}NodePrepareResources`, Buffer.from([0x0a, 0xff, 0xff]), 5000);
  assert.equal(bad.code, grpc.status.INVALID_ARGUMENT);
  const big = Buffer.alloc(4 * 1024 * 1024 + 16, 0x41);
  const over = await sim.callRaw(d.endpoint, `${d.servicePrefix}NodePrepareResources`, big, 10000);
  assert.equal(over.code, grpc.status.RESOURCE_EXHAUSTED);
  const c = claim('after');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices[0].device_name, 'after');
});

// ATTACK: 4 MiB of empty claims (2 bytes each on the wire, about 2
// million) from a hostile peer on the DRA socket. Each unpacks into a
// Claim, and the request is refused at the first one (namespace
// required); the decoder's per-claim array must not be made (and zeroed:
// 64 bytes a claim, touched) before that. With it first the nodeserver
// peaked 92 times the request's size, without it 54 (as before the
// arena). Not under ASan: its allocator keeps freed memory.
test('ATTACK: 4 MiB of empty claims: refused, the nodeserver\'s peak memory stays under 75 times the request', async (t) => {
  const { drv, sim } = await setup(t);
  const d = await sim.waitForDriver(DRIVER);
  const ns = roles(drv.proc.pid).nodeserver;
  const hwm = () => Number((procStatus(ns).VmHWM || '0 kB').split(' ')[0]);
  const size = 4 * 1024 * 1024 - 64;
  const before = hwm();
  const raw = await sim.callRaw(d.endpoint, `${d.servicePrefix}NodePrepareResources`,
    Buffer.alloc(size, Buffer.from([0x0a, 0x00])), 30000);
  assert.equal(raw.code, grpc.status.INVALID_ARGUMENT);
  assert.match(raw.details, /claims\[0\]\.namespace: required/);
  const grown = hwm() - before;
  if (!/asan/.test(process.env.KP_BUILD || '')) assert.ok(grown * 1024 < 75 * size, `the nodeserver's peak grew by ${grown} kB`);
  const c = claim('after');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices[0].device_name, 'after');
  assert.equal(roles(drv.proc.pid).nodeserver, ns, 'the same nodeserver answers');
});

test('kubelet reporting a failed registration', async (t) => {
  const { drv, sim } = await setup(t, { simOpts: { rejectWith: 'no handler registered for plugin type: DRAPlugin' } });
  const st = await until(async () => {
    const s = await drv.status();
    return s.state === 2 ? s : null;
  });
  assert.match(st.error, /no handler registered for plugin type: DRAPlugin/);
  await drv.stderrMatch(/kubelet rejected the registration/);
  assert.ok(sim);
});

test('a stale socket left by a SIGKILLed run is replaced', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const first = new TestDriver(root);
  await first.ready();
  const pids = roles(first.proc.pid);
  // Kill the whole tree, supervisor first: nothing gets to clean up.
  for (const pid of [pids.supervisor, ...Object.values(pids), first.proc.pid]) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  await first.exited;
  await until(() => Object.values(pids).every((p) => !isAlive(p)));
  assert.ok(fs.lstatSync(root.regSock).isSocket(), 'stale registration socket left');
  assert.ok(fs.lstatSync(root.draSock).isSocket(), 'stale DRA socket left');
  const second = new TestDriver(root);
  t.after(async () => { second.kill(); await second.exited; });
  await second.ready();
  const sim = new KubeletSim({ registryDir: root.registry }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  const c = claim('again');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices[0].device_name, 'again');
});

test('a non-socket at a socket path is an error and is left intact', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  fs.writeFileSync(root.draSock, 'precious data');
  const drv = new TestDriver(root);
  const l = await drv.line(['ready', 'error']);
  await drv.exited;
  assert.match(l, /^error KP_EEXIST .*dra\.sock exists and is not a socket \(a regular file\)/);
  assert.equal(fs.readFileSync(root.draSock, 'utf8'), 'precious data');
  assert.ok(!fs.existsSync(root.regSock));
  fs.rmSync(root.draSock);
  fs.mkdirSync(root.regSock);
  const drv2 = new TestDriver(root);
  const l2 = await drv2.line(['ready', 'error']);
  await drv2.exited;
  assert.match(l2, /^error KP_EEXIST .*reg\.sock exists and is not a socket \(a directory\)/);
  assert.ok(fs.statSync(root.regSock).isDirectory());
});

test('a socket path longer than sun_path is an error', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const long = path.join(root.dir, 'x'.repeat(120), 'dra.sock');
  const drv = new TestDriver(root, ['--plugin-socket', long]);
  const l = await drv.line(['ready', 'error']);
  await drv.exited;
  assert.match(l, /^error KP_\w+ .*kp_plugin_socket_path/);
  assert.match(l, /107/);
});

test('a multi-threaded caller is refused', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const drv = new TestDriver(root, ['--spawn-thread']);
  const l = await drv.line(['ready', 'error']);
  drv.kill();
  await drv.exited;
  assert.match(l, /^error KP_EBUSY .*2 threads/);
  assert.ok(!fs.existsSync(root.draSock), 'nothing created');
});

test('an init hook failure fails kp_start with the child error', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const drv = new TestDriver(root, ['--init-fail']);
  const l = await drv.line(['ready', 'error']);
  await drv.exited;
  assert.match(l, /^error KP_ECHILD nodeserver: init hook failed: test init failure/);
  await until(() => !fs.existsSync(root.draSock), 5000);
  assert.ok(!fs.existsSync(root.regSock));
});

// SIGKILL a child in the middle of a call: the sockets stay, the
// supervisor restarts the child, the next call succeeds.
for (const role of ['nodeserver', 'registrar']) {
  test(`SIGKILL of the ${role} mid-call: sockets stay, child restarts`, async (t) => {
    const { drv, sim, root } = await setup(t, { args: ['--slow-ms', '1500'] });
    await sim.waitForDriver(DRIVER);
    const watch = watchSockets([root.regSock, root.draSock]);
    const before = roles(drv.proc.pid);
    assert.ok(before[role], `${role} running`);
    const inflight = sim.nodePrepareResources(DRIVER, [claim('slow')], { timeoutMs: 20000 })
      .then(() => 'ok', (e) => e);
    await sleep(300);
    process.kill(before[role], 'SIGKILL');
    const r = await inflight;
    if (role === 'nodeserver') assert.ok(r instanceof Error, 'in-flight call fails with its server');
    const after = await until(() => {
      const now = roles(drv.proc.pid);
      return now[role] && now[role] !== before[role] ? now : null;
    });
    assert.equal(after.supervisor, before.supervisor);
    const c = claim('next');
    const res = await until(() => sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 20000 })
      .then((x) => x, () => null), 15000, 200);
    assert.equal(res.claims[c.uid].devices[0].device_name, 'next');
    const w = watch();
    assert.ok(w.samples > 100, `watched ${w.samples} samples`);
    assert.equal(w.missing, 0, 'socket files never disappeared');
    await drv.stderrMatch(new RegExp(`${role} killed by signal 9`));
  });
}

test('the registrar comes back: kubelet re-registers after a socket-level restart', async (t) => {
  const { drv, sim } = await setup(t);
  await sim.waitForDriver(DRIVER);
  const before = roles(drv.proc.pid);
  process.kill(before.registrar, 'SIGKILL');
  await until(() => {
    const now = roles(drv.proc.pid);
    return now.registrar && now.registrar !== before.registrar;
  });
  // A kubelet that dials again (e.g. after its own restart) is served.
  const sim2 = new KubeletSim({ registryDir: sim.options.registryDir }).start();
  t.after(() => sim2.stop());
  const d = await sim2.waitForDriver(DRIVER);
  assert.equal(d.api, 'v1');
});

// cdichanged: the supervisor's news of the CDI directory (a CdiChanged
// with reset), sent upward to make the supervisor think something.
for (const kind of ['oversize', 'unpermitted', 'garbage', 'cdichanged']) {
  test(`a nodeserver sending a ${kind} frame is killed and restarted`, async (t) => {
    const { drv, sim } = await setup(t);
    await sim.waitForDriver(DRIVER);
    const before = roles(drv.proc.pid);
    await assert.rejects(sim.nodePrepareResources(DRIVER, [claim(`hostile-${kind}`)], { timeoutMs: 10000 }));
    await until(() => /nodeserver: protocol violation: .*; killing it/.test(drv.stderr));
    if (kind === 'cdichanged') assert.match(drv.stderr, /nodeserver: protocol violation: unpermitted frame cdi_changed from the nodeserver; killing it/);
    const after = await until(() => {
      const now = roles(drv.proc.pid);
      return now.nodeserver && now.nodeserver !== before.nodeserver ? now : null;
    });
    assert.equal(after.supervisor, before.supervisor, 'the supervisor survived');
    const c = claim('fine');
    const res = await until(() => sim.nodePrepareResources(DRIVER, [c])
      .then((x) => x, () => null), 15000, 200);
    assert.equal(res.claims[c.uid].devices[0].device_name, 'fine');
  });
}

test('peers whose uid is not allowed are rejected', async (t) => {
  // Only uid 4242 may connect; the simulator runs as root.
  const { drv, root } = await setup(t, { args: ['--allow-uid', '4242', '--socket-mode', '0666'] });
  for (const d of [root.dir, path.dirname(path.dirname(root.draSock)), path.dirname(root.draSock)]) fs.chmodSync(d, 0o755);
  const req = proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'), { claims: [claim('u')] });
  const r = await new KubeletSim({ registryDir: root.registry })
    .callRaw(root.draSock, '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources', req, 3000);
  assert.notEqual(r.code, grpc.status.OK);
  await until(() => /uid 0/.test(drv.stderr) && /reject|not allowed/i.test(drv.stderr));
  // A client running as uid 4242 gets through.
  const script = `
    const { callRaw, proto } = require(${JSON.stringify(path.join(ROOT, 'tests/kubelet-sim'))});
    const req = Buffer.from(${JSON.stringify(req.toString('base64'))}, 'base64');
    callRaw(${JSON.stringify(root.draSock)}, '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources', req, 5000)
      .then((r) => { console.log(r.code); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', script], { uid: 4242, gid: 4242, cwd: '/' });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(out.trim(), String(grpc.status.OK));
});

test('prepare and unprepare are serialized by default, concurrent when asked', async (t) => {
  await t.test('serialized', async (t2) => {
    const { drv, sim } = await setup(t2, { args: ['--slow-ms', '200'] });
    await sim.waitForDriver(DRIVER);
    await Promise.all([1, 2, 3, 4].map((i) => sim.nodePrepareResources(DRIVER, [claim(`s${i}`)])));
    await Promise.all([1, 2].map((i) => sim.nodeUnprepareResources(DRIVER, [claim(`s${i}`)])));
    assert.doesNotMatch(drv.stderr, /OVERLAP/);
  });
  await t.test('concurrent with 4 workers', async (t2) => {
    const { drv, sim } = await setup(t2, { args: ['--slow-ms', '300', '--workers', '4'] });
    await sim.waitForDriver(DRIVER);
    await Promise.all([1, 2, 3, 4].map((i) => sim.nodePrepareResources(DRIVER, [claim(`p${i}`)])));
    await drv.stderrMatch(/OVERLAP/);
  });
});

test('interceptors run in the order added and may reject', async (t) => {
  const { drv, sim } = await setup(t, { args: ['--interceptors'], env: { KP_TEST_DENY_UNPREPARE: '1' } });
  await sim.waitForDriver(DRIVER);
  const c = claim('i1');
  await sim.nodePrepareResources(DRIVER, [c]);
  // The interceptors write to the plugin's stderr, which arrives apart.
  const lines = await until(() => {
    const l = childLines(drv.stderr).filter((x) => x.startsWith('interceptor') && x.includes('NodePrepare'));
    return l.length >= 4 ? l : null;
  });
  assert.deepEqual(lines.map((l) => l.split(' ').slice(1, 3).join(' ')),
    ['A before', 'B before', 'A after', 'B after']);
  await assert.rejects(sim.nodeUnprepareResources(DRIVER, [c]), /PermissionDenied|denied by interceptor B/);
  await until(() => drv.stderr.split('\n').some((l) => /interceptor A before .*Unprepare/.test(l)));
  assert.ok(!drv.stderr.split('\n').some((l) => /interceptor A after .*Unprepare.*status=0/.test(l)));
});

test('kp_stop leaves no process, socket file or fd behind', async (t) => {
  const { drv, sim, root } = await setup(t);
  await sim.waitForDriver(DRIVER);
  const pids = roles(drv.proc.pid);
  assert.ok(pids.supervisor && pids.nodeserver && pids.registrar);
  const r = await drv.stop();
  assert.equal(r.code, 0);
  assert.equal(r.fdsAfter, r.fdsBefore, 'no fd leaked into the driver');
  for (const p of Object.values(pids)) assert.equal(procStatus(p), null, `pid ${p} gone and reaped`);
  assert.ok(!fs.existsSync(root.regSock));
  assert.ok(!fs.existsSync(root.draSock));
});

test('the driver process dying stops the plugin and removes the sockets', async (t) => {
  const { drv, root } = await setup(t);
  const pids = roles(drv.proc.pid);
  drv.kill('SIGKILL');
  await drv.exited;
  await until(() => Object.values(pids).every((p) => !isAlive(p)));
  await until(() => !fs.existsSync(root.regSock) && !fs.existsSync(root.draSock));
});

test('restarts back off: 100 ms, doubling', async (t) => {
  const { drv } = await setup(t);
  let prev = roles(drv.proc.pid).nodeserver;
  for (let i = 0; i < 3; i++) {
    process.kill(prev, 'SIGKILL');
    prev = (await until(() => {
      const now = roles(drv.proc.pid);
      return now.nodeserver && now.nodeserver !== prev ? now : null;
    })).nodeserver;
  }
  const delays = [...drv.stderr.matchAll(/restarting nodeserver in (\d+) ms/g)].map((m) => Number(m[1]));
  assert.deepEqual(delays, [100, 200, 400]);
});

// Issue 15: a crash storm cannot lock the plugin out: the backoff stops at
// 3.2 s, the storm is reported once, and a call made while the nodeserver
// is down waits in the socket's backlog and succeeds.
test('a crash loop restarts at most every 3.2 s, is reported, and a call made meanwhile succeeds', async (t) => {
  const { drv, sim, root } = await setup(t);
  await sim.waitForDriver(DRIVER);
  let prev = roles(drv.proc.pid).nodeserver;
  for (let i = 0; i < 7; i++) {
    process.kill(prev, 'SIGKILL');
    prev = (await until(() => {
      const now = roles(drv.proc.pid);
      return now.nodeserver && now.nodeserver !== prev ? now : null;
    }, 15000)).nodeserver;
  }
  const delays = [...drv.stderr.matchAll(/restarting nodeserver in (\d+) ms/g)].map((m) => Number(m[1]));
  assert.deepEqual(delays, [100, 200, 400, 800, 1600, 3200, 3200]);
  assert.equal([...drv.stderr.matchAll(/nodeserver is crash-looping/g)].length, 1, 'reported once');
  // Kill once more and call at once from a new connection (kubelet's
  // old one dies with the child): it waits in the backlog for the next
  // child, 3.2 s later, and succeeds.
  process.kill(prev, 'SIGKILL');
  const fresh = new KubeletSim({ registryDir: root.registry, version: '1.34', retryInitialMs: 100 }).start();
  t.after(() => fresh.stop());
  await fresh.waitForDriver(DRIVER);
  const c = { namespace: 'default', name: 'during-storm', uid: randomUUID() };
  const t0 = Date.now();
  const res = await fresh.nodePrepareResources(DRIVER, [c], { timeoutMs: 45000 });
  assert.equal(res.claims[c.uid].devices.length, 1);
  t.diagnostic(`served ${Date.now() - t0} ms after the kill`);
});

// Issue 13: kp_log() from a hook goes through the library's logger with
// the role's name (not the stderr relay), sanitised, at its verbosity.
test('kp_log from a hook: a nodeserver line in the log sink, with kp_version', async (t) => {
  const { drv, sim } = await setup(t, { args: ['-v', '2'] });
  await sim.waitForDriver(DRIVER);
  const c = claim('kplog-hello');
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices.length, 1);
  await until(() => /^W\d{4} [\d:.]+ +\d+ nodeserver\] hook says hello \(library \d+\.\d+\.\d+\)$/m.test(drv.stderr));
  assert.doesNotMatch(drv.stderr, /stderr: .*hook says/, 'not through the stderr relay');
  assert.doesNotMatch(drv.stderr, /hook whispers/, 'an info line above the verbosity is not shown');
});

