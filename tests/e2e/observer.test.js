'use strict';
// End-to-end tests of the observer (issue 14): the fifth, sandboxed child
// that serves /healthz, /readyz and /metrics (kp_http_endpoint), each
// /healthz reason against the real peers (a stopped child, kubelet's
// rejection from the simulator), a removed socket's repair and a live
// foreign socket's stop as the observer sees them, the
// Prometheus page parsed by an independent parser, the exec probe CLI's
// exit codes, and the observer's sandbox (attacks from inside it with the
// library's own policy_apply, tests/e2e/bin/kp_obsprobe.c).
//
//   KP_BUILD=build node --test --test-concurrency=1 tests/e2e/observer.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawnSync, execFileSync } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const parsePrometheus = require('parse-prometheus-text-format');
const { KubeletSim } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const { makeRoot, TestDriver, roles, until, sleep, procStatus, BUILD, UID_BASE, freePort } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const AS_ROOT = process.getuid() === 0;
const PROBE = path.join(BUILD, 'tools', 'kubeletplugin-probe');
const OBSPROBE = path.join(BUILD, 'tests', 'kp_obsprobe');
const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

// A TCP port nothing listens on now.
async function get(port, p, method = 'GET') {
  const r = await fetch(`http://127.0.0.1:${port}${p}`, { method, signal: AbortSignal.timeout(5000) });
  return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
}

async function setup(t, { args = [], simOpts = {}, sim = true } = {}) {
  const root = makeRoot(DRIVER);
  const port = await freePort();
  const drv = new TestDriver(root, ['--http-endpoint', `127.0.0.1:${port}`, ...args]);
  t.after(async () => {
    // A clean stop: every child exits by itself (under ASan: no leak).
    const st = drv.proc.exitCode === null ? await drv.stop().catch(() => null) : null;
    drv.kill();
    await drv.exited;
    root.cleanup();
    assert.doesNotMatch(drv.stderr, /Sanitizer|runtime error:/);
    // The observer's allowlist covers what it does.
    assert.doesNotMatch(drv.stderr, /kp-observer: seccomp violation|observer killed/);
    if (st) assert.equal(st.code, 0, drv.stderr);
  });
  await drv.ready();
  let s = null;
  if (sim) {
    s = new KubeletSim({ registryDir: root.registry, version: '1.34', retryInitialMs: 100, ...simOpts }).start();
    t.after(() => s.stop());
  }
  return { root, drv, sim: s, port };
}

// Polls path until pred accepts the answer.
const waitFor = (port, p, pred, ms = 15000) => until(async () => {
  const r = await get(port, p).catch(() => null);
  return r && pred(r) ? r : null;
}, ms, 100);

// The page as { name: [{ labels, value }] } for counters and gauges.
function metrics(text) {
  const out = {};
  for (const f of parsePrometheus(text)) out[f.name] = f;
  return out;
}

function sample(fams, name, labels = {}) {
  const f = fams[name];
  if (!f) return undefined;
  const m = f.metrics.find((x) => Object.entries(labels).every(([k, v]) => (x.labels || {})[k] === v));
  return m === undefined ? undefined : Number(m.value);
}

test('kp_http_endpoint: invalid addresses are refused naming the option; a port in use fails kp_start', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  for (const bad of ['localhost:80', '127.0.0.1', '127.0.0.1:0', '127.0.0.1:65536', '[::1:80', '1.2.3:80']) {
    const drv = new TestDriver(root, ['--http-endpoint', bad]);
    const l = await drv.line(['error', 'ready']);
    drv.kill();
    await drv.exited;
    assert.match(l, /^error KP_EINVAL kp_http_endpoint \(beyond upstream\): /, `${bad}: ${l}`);
  }
  const busy = net.createServer();
  await new Promise((r) => busy.listen(0, '127.0.0.1', r));
  t.after(() => busy.close());
  const drv = new TestDriver(root, ['--http-endpoint', `127.0.0.1:${busy.address().port}`]);
  const l = await drv.line(['error', 'ready']);
  drv.kill();
  await drv.exited;
  assert.match(l, /kp_http_endpoint .*Address already in use/, l);
});

test('/healthz, /readyz, /metrics: 200 once registered; readyz waits for kubelet; other paths and methods refused', async (t) => {
  const { drv, root, port } = await setup(t, { sim: false });
  // Before kubelet registered the plugin: live, not ready.
  const h = await waitFor(port, '/healthz', (r) => r.status === 200);
  assert.equal(h.body, 'ok\n');
  assert.match(h.type, /^text\/plain/);
  const notReady = await get(port, '/readyz');
  assert.equal(notReady.status, 503);
  assert.equal(notReady.body, 'not registered with kubelet yet\n');
  const sim = new KubeletSim({ registryDir: root.registry, version: '1.34', retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  await waitFor(port, '/readyz', (r) => r.status === 200 && r.body === 'ok\n');
  const m = await get(port, '/metrics');
  assert.equal(m.status, 200);
  assert.match(m.type, /^text\/plain; version=0\.0\.4/);
  const fams = metrics(m.body);
  assert.equal(sample(fams, 'kubeletplugin_registration_state', { state: 'registered' }), 1);
  assert.equal(sample(fams, 'kubeletplugin_registration_state', { state: 'none' }), 0);
  assert.equal((await get(port, '/nope')).status, 404);
  assert.equal((await get(port, '/healthz', 'POST')).status, 405);
  assert.equal((await get(port, '/healthz', 'HEAD')).status, 200);
  // The observer is a child of the supervisor like the others.
  assert.ok(roles(drv.proc.pid).observer, 'kp-observer runs');
});

test('metrics count: gRPC calls by method and code, latency histogram, restarts by role and reason', async (t) => {
  const { drv, sim, port } = await setup(t, { args: ['--fail-claim', 'bad'], simOpts: { healthStream: true } });
  await sim.waitForDriver(DRIVER);
  const count = async () => {
    const fams = metrics((await get(port, '/metrics')).body);
    return {
      fams,
      ok: sample(fams, 'kubeletplugin_grpc_requests_total', { method: PREPARE, code: 'OK' }) || 0,
      getInfo: sample(fams, 'kubeletplugin_grpc_requests_total', { method: '/pluginregistration.Registration/GetInfo', code: 'OK' }) || 0,
    };
  };
  await sim.nodePrepareResources(DRIVER, [claim('a')]);
  const first = await until(async () => {
    const c = await count();
    return c.ok >= 1 ? c : null;
  }, 10000, 100);
  assert.ok(first.getInfo >= 1, 'GetInfo counted');
  await sim.nodePrepareResources(DRIVER, [claim('b')]);
  await sim.nodePrepareResources(DRIVER, [claim('c')]);
  const later = await until(async () => {
    const c = await count();
    return c.ok >= first.ok + 2 ? c : null;
  }, 10000, 100);
  assert.equal(later.ok, first.ok + 2, 'each call counted once');
  // The histogram: its families and the count agree with the counter.
  const text = (await get(port, '/metrics')).body;
  const esc = PREPARE.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const cnt = new RegExp(`^kubeletplugin_grpc_request_duration_seconds_count\\{method="${esc}"\\} (\\d+)$`, 'm').exec(text);
  const inf = new RegExp(`^kubeletplugin_grpc_request_duration_seconds_bucket\\{method="${esc}",le="\\+Inf"\\} (\\d+)$`, 'm').exec(text);
  assert.ok(cnt && inf, text);
  assert.equal(Number(cnt[1]), Number(inf[1]));
  assert.ok(Number(cnt[1]) >= later.ok);
  assert.ok(later.fams.kubeletplugin_grpc_request_duration_seconds, 'the parser sees the histogram');
  assert.equal(later.fams.kubeletplugin_grpc_request_duration_seconds.type, 'HISTOGRAM');
  assert.equal(sample(later.fams, 'kubeletplugin_grpc_requests_in_flight', { method: PREPARE }), 0);
  assert.ok(sample(later.fams, 'kubeletplugin_serialization_lock_waits_total') >= 3);
  // The simulated kubelet holds a health stream open.
  await until(async () => sample(metrics((await get(port, '/metrics')).body),
    'kubeletplugin_health_stream_clients') === 1, 10000, 100);
  // A killed nodeserver is counted as a restart by signal.
  assert.equal(sample(later.fams, 'kubeletplugin_process_restarts_total', { role: 'nodeserver', reason: 'signaled' }), 0);
  process.kill(roles(drv.proc.pid).nodeserver, 'SIGKILL');
  await until(async () => sample(metrics((await get(port, '/metrics')).body),
    'kubeletplugin_process_restarts_total', { role: 'nodeserver', reason: 'signaled' }) === 1, 15000, 100);
});

test('publisher metrics: API requests by verb and code, slices per pool, sync age; a stopped publisher fails /healthz', async (t) => {
  const root = makeRoot(DRIVER);
  const tokenFile = path.join(root.dir, 'token');
  const emu = await startEmulator({ versions: ['v1'], nodes: ['node-1'], tokenFile });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const port = await freePort();
  const drv = new TestDriver(root, ['--http-endpoint', `127.0.0.1:${port}`, '--kubeconfig', kc, '--node-name', 'node-1']);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    await emu.stop();
    root.cleanup();
  });
  await drv.ready();
  // Two pools of 130 devices: two slices each (128 devices a slice).
  const l = await drv.command('publish 130 2 a', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await until(() => emu.getSlices({}).length === 4, 20000, 100);
  const fams = await until(async () => {
    const f = metrics((await get(port, '/metrics')).body);
    return sample(f, 'kubeletplugin_resourceslices', { pool: 'pool-0' }) === 2 &&
      sample(f, 'kubeletplugin_resourceslices', { pool: 'pool-1' }) === 2 &&
      sample(f, 'kubeletplugin_resourceslice_pending_pools') === 0 ? f : null;
  }, 20000, 200);
  // Every POST the emulator answered 201 (the four slices), counted once.
  const created = emu.requests({ method: 'POST' }).filter((e) => e.status === 201).length;
  assert.ok(created >= 4);
  await until(async () => sample(metrics((await get(port, '/metrics')).body),
    'kubeletplugin_api_requests_total', { verb: 'POST', code: '201' }) === created, 10000, 200);
  assert.ok(sample(fams, 'kubeletplugin_api_requests_total', { verb: 'GET', code: '200' }) >= 1, 'discovery, list');
  assert.ok(sample(fams, 'kubeletplugin_resourceslice_sync_age_seconds') >= 0);
  const pub = roles(drv.proc.pid).publisher;
  process.kill(pub, 'SIGSTOP');
  let r;
  try {
    r = await waitFor(port, '/healthz', (x) => x.status === 503, 15000);
  } finally {
    process.kill(pub, 'SIGCONT');
  }
  assert.match(r.body, /^publisher has not answered the supervisor's heartbeat/);
  await waitFor(port, '/healthz', (x) => x.status === 200, 15000);
});

// A wedged supervisor sends no snapshot: the real observer answers from
// the last one until it is 5 s old, then fails /healthz saying so.
test('a stopped broker (which sends the snapshots): /healthz fails once the last snapshot is over 5 s old, saying so; SIGCONT recovers', async (t) => {
  const { drv, port } = await setup(t, { sim: false });
  await waitFor(port, '/healthz', (r) => r.status === 200);
  const sup = roles(drv.proc.pid).broker;
  const t0 = Date.now();
  process.kill(sup, 'SIGSTOP');
  t.after(() => { try { process.kill(sup, 'SIGCONT'); } catch { /* gone */ } });
  const r = await waitFor(port, '/healthz', (x) => x.status === 503, 20000);
  // The last snapshot came at most a second before the stop.
  assert.ok(Date.now() - t0 >= 4000, `failed ${Date.now() - t0} ms after the stop`);
  assert.match(r.body, /the supervisor has not reported for [5-9] s/);
  process.kill(sup, 'SIGCONT');
  await waitFor(port, '/healthz', (x) => x.status === 200);
});

test('a stopped child fails /healthz naming it; SIGCONT recovers; a slow prepare does not fail it', async (t) => {
  // Not replaced meanwhile (kp_hung_child_timeout, 10 s by default, is
  // heal.test.js's): what /healthz says is tested here.
  const { drv, sim, port } = await setup(t, { args: ['--slow-ms', '7000', '--hung-ms', '30000'] });
  await sim.waitForDriver(DRIVER);
  await waitFor(port, '/healthz', (r) => r.status === 200);
  // A hook that takes 7 s: the heartbeat (5 s) is answered beside it.
  const slow = sim.nodePrepareResources(DRIVER, [claim('slow')]);
  const seen = [];
  const end = Date.now() + 6000;
  while (Date.now() < end) {
    seen.push((await get(port, '/healthz')).status);
    await sleep(250);
  }
  await slow;
  assert.deepEqual([...new Set(seen)], [200], 'healthy throughout the slow call');
  for (const role of ['nodeserver', 'registrar']) {
    const pid = roles(drv.proc.pid)[role];
    process.kill(pid, 'SIGSTOP');
    let r;
    try {
      r = await waitFor(port, '/healthz', (x) => x.status === 503, 15000);
      const ready = await get(port, '/readyz');
      assert.equal(ready.status, 503);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    assert.match(r.body, new RegExp(`^${role} has not answered the supervisor's heartbeat for \\d+ s\\n$`));
    await waitFor(port, '/healthz', (x) => x.status === 200, 15000);
    assert.equal(roles(drv.proc.pid)[role], pid, `${role} was not restarted`);
  }
  const fams = metrics((await get(port, '/metrics')).body);
  assert.equal(sample(fams, 'kubeletplugin_process_up', { role: 'nodeserver' }), 1);
});

test('kubelet rejects the registration: /healthz is 503 with kubelet\'s error', async (t) => {
  const { port } = await setup(t, { simOpts: { rejectWith: 'simulated rejection' } });
  const r = await waitFor(port, '/healthz', (x) => x.status === 503);
  assert.match(r.body, /^kubelet rejected the registration: .*simulated rejection\n$/);
  const fams = metrics((await get(port, '/metrics')).body);
  assert.equal(sample(fams, 'kubeletplugin_registration_state', { state: 'failed' }), 1);
});

test('a removed DRA socket is re-created and /healthz stays or gets ok; a live foreign socket there stops the plugin', async (t) => {
  const { root, drv, sim, port } = await setup(t, { args: ['--exit-on-stop'] });
  await sim.waitForDriver(DRIVER);
  await waitFor(port, '/healthz', (r) => r.status === 200);
  // Removed: the supervisor binds a new socket at the same path (a new
  // inode) within its check interval and says so; the "socket … is
  // missing" reason can only show in between, so it is not asserted.
  const before = fs.lstatSync(root.draSock).ino;
  fs.unlinkSync(root.draSock);
  await until(() => { try { const s = fs.lstatSync(root.draSock); return s.isSocket() && s.ino !== before; } catch { return false; } }, 10000);
  await drv.stderrMatch(/DRA socket \S+dra\.sock was removed from outside; re-creating it/);
  await waitFor(port, '/healthz', (x) => x.status === 200);
  // Replaced by a socket another live instance serves: no fight, no 503
  // to wait for: the plugin stops and kp_plugin_wait() says why.
  // (the supervisor's liveness probe connects to it: those connections
  // are ended here, or close() would wait for them and keep this file's
  // process alive)
  const conns = new Set();
  const other = net.createServer((c) => { conns.add(c); c.on('close', () => conns.delete(c)); c.end(); });
  const tmp = path.join(path.dirname(root.draSock), '.other.sock');
  await new Promise((r) => other.listen(tmp, r));
  t.after(() => { for (const c of conns) c.destroy(); other.close(); other.unref(); });
  fs.renameSync(tmp, root.draSock);
  const l = await drv.line(['plugin-stopped'], 15000);
  assert.match(l, /^plugin-stopped KP_ECHILD DRA socket \S+ another live instance serves there; stepping aside/);
  const { code } = await drv.exited;
  assert.notEqual(code, 0);
});

// shutdown(SHUT_RDWR) of every listening socket pid holds, on a copy
// of its fd taken with pidfd_getfd (as root): what a compromised process
// holding it could do. Prints "shut <fd>" for each.
const SHUTDOWN_LISTENERS = `
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
pidfd = libc.syscall(434, pid, 0)                  # pidfd_open
for n in sorted(os.listdir('/proc/%d/fd' % pid), key=int):
    fd = libc.syscall(438, pidfd, int(n), 0)       # pidfd_getfd
    if fd < 0:
        continue
    try:
        s = socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        continue
    if s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
        s.shutdown(socket.SHUT_RDWR)
        print('shut', n)
    s.close()
`;

test('the observer\'s listener shut down (a compromised observer): the observer is killed, a new socket on the same port answers /healthz', { skip: !AS_ROOT && 'needs root (pidfd_getfd)' }, async (t) => {
  const root = makeRoot(DRIVER);
  const port = await freePort();
  const drv = new TestDriver(root, ['--http-endpoint', `127.0.0.1:${port}`]);
  t.after(async () => { drv.kill(); await drv.exited; root.cleanup(); });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, version: '1.34', retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await waitFor(port, '/healthz', (r) => r.status === 200);
  const obs = roles(drv.proc.pid).observer;
  const out = execFileSync('/usr/bin/python3', ['-c', SHUTDOWN_LISTENERS, String(obs)]).toString();
  assert.match(out, /^shut \d+$/m, out);
  // On main the port refused connections for good.
  await waitFor(port, '/healthz', (r) => r.status === 200, 10000);
  await drv.stderrMatch(/the HTTP \(kp_http_endpoint\) listening socket was shut down: every connection is refused; re-creating it/);
  await drv.stderrMatch(/observer: protocol violation: shut down its listening socket; killing it/);
  assert.notEqual(roles(drv.proc.pid).observer, obs, 'a new observer');
  assert.equal(drv.proc.exitCode, null, 'the plugin keeps running');
});

test('kubeletplugin-probe: exit codes 0, 2, 3, 4, 5, 64', async (t) => {
  const probe = (...a) => spawnSync(PROBE, a, { encoding: 'utf8', timeout: 20000 });
  const help = probe('--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /Exit codes: 0 ok; 2 socket missing/);
  assert.equal(probe().status, 64);
  assert.equal(probe('--timeout-ms', 'x', '--driver-name', DRIVER).status, 64);
  const { drv, root } = await setup(t, { sim: false });
  const ok = probe('--registrar-socket', root.regSock, '--driver-name', DRIVER);
  assert.equal(ok.status, 0, ok.stderr);
  // The registration socket derived from --kubelet-dir and the name.
  assert.equal(probe('--driver-name', DRIVER, '--kubelet-dir', root.dir).status, 0);
  // The name-derived socket absent: a hint for rolling updates.
  const noInst = probe('--driver-name', 'none.example.com', '--kubelet-dir', root.dir);
  assert.equal(noInst.status, 2);
  assert.match(noInst.stderr, /under rolling updates .* pass --pod-uid or --pod-uid-env\n$/);
  const wrong = probe('--registrar-socket', root.regSock, '--driver-name', 'other.example.com');
  assert.equal(wrong.status, 5);
  assert.match(wrong.stderr, /driver test\.example\.com, not other\.example\.com/);
  const missing = probe('--registrar-socket', path.join(root.dir, 'none.sock'));
  assert.equal(missing.status, 2);
  assert.equal(probe('--registrar-socket', root.regSock, '--plugin-socket', path.join(root.dir, 'none.sock')).status, 2);
  // A socket file nothing listens on: connection refused.
  const dead = path.join(root.dir, 'dead.sock');
  execFileSync('/usr/bin/python3', ['-c', `import socket; s=socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(dead)})`]);
  const refused = probe('--registrar-socket', dead);
  assert.equal(refused.status, 3, refused.stderr);
  // A stopped registrar: the connection is accepted by the kernel, GetInfo
  // times out.
  const reg = roles(drv.proc.pid).registrar;
  process.kill(reg, 'SIGSTOP');
  let slow;
  try {
    slow = probe('--registrar-socket', root.regSock, '--timeout-ms', '500');
  } finally {
    process.kill(reg, 'SIGCONT');
  }
  assert.equal(slow.status, 4, slow.stderr);
  assert.match(slow.stderr, /GetInfo/);
  const quiet = probe('-q', '--registrar-socket', path.join(root.dir, 'none.sock'));
  assert.equal(quiet.status, 2);
  assert.equal(quiet.stderr, '');
});

test('kubeletplugin-probe finds a rolling-update instance by its pod UID', async (t) => {
  const root = makeRoot(DRIVER);
  const uid = randomUUID();
  const drv = new TestDriver(root, ['--kubelet-root-dir', root.dir, '--rolling-update-uid', uid], { paths: false });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  const probe = (args, env = {}) => spawnSync(PROBE, args, { encoding: 'utf8', timeout: 20000, env: { ...process.env, ...env } });
  const base = ['--driver-name', DRIVER, '--kubelet-dir', root.dir];
  assert.equal(probe([...base, '--pod-uid', uid]).status, 0);
  assert.equal(probe([...base, '--pod-uid-env', 'KP_TEST_UID'], { KP_TEST_UID: uid }).status, 0);
  // Without the UID the instance's socket is not the default name.
  assert.equal(probe(base).status, 2);
  assert.equal(probe([...base, '--pod-uid', '']).status, 64);
});

test('the observer\'s sandbox: own uid, no capabilities, seccomp, no new privileges, empty root, own pid namespace, no files', { skip: !AS_ROOT && 'needs root' }, async (t) => {
  const { drv, port } = await setup(t, { sim: false });
  await waitFor(port, '/healthz', (r) => r.status === 200);
  const pid = roles(drv.proc.pid).observer;
  const st = procStatus(pid);
  const uid = UID_BASE + 3;
  assert.equal(st.Uid.split(/\s+/).slice(0, 3).join(' '), `${uid} ${uid} ${uid}`);
  assert.equal(st.Gid.split(/\s+/).slice(0, 3).join(' '), `${uid} ${uid} ${uid}`);
  assert.equal(st.Groups, '');
  for (const k of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) assert.equal(st[k], '0000000000000000', k);
  assert.equal(st.NoNewPrivs, '1');
  assert.equal(st.Seccomp, '2');
  assert.equal(st.NSpid.split(/\s+/).pop(), '1', 'pid 1 of its own namespace');
  assert.deepEqual(fs.readdirSync(`/proc/${pid}/root/`), [], 'empty root');
  // RLIMIT_CORE 0, the hard limit too (isolation.test.js starts the
  // driver with core dumps allowed and checks the other children).
  const core = (p) => fs.readFileSync(`/proc/${p}/limits`, 'utf8').split('\n')
    .find((l) => l.startsWith('Max core file size')).slice(18).trim().split(/\s+/).slice(0, 2);
  assert.deepEqual(core(pid), ['0', '0'], 'RLIMIT_CORE');
  // Its fds: stdio, its two channels, the listener, libmicrohttpd's epoll
  // and its signalfd; nothing else, no file.
  const fds = fs.readdirSync(`/proc/${pid}/fd`).map((f) => fs.readlinkSync(`/proc/${pid}/fd/${f}`));
  for (const l of fds) assert.match(l, /^(\/dev\/null|pipe:|socket:|anon_inode:\[(eventpoll|signalfd)\])/, l);
  assert.equal(fds.filter((l) => /^\//.test(l) && l !== '/dev/null').length, 0);
});

test('attacks from inside the observer\'s sandbox are denied', { skip: !AS_ROOT && 'needs root' }, async (t) => {
  const srv = net.createServer((c) => c.end()).listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  t.after(() => srv.close());
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const unix = net.createServer((c) => c.end()).listen(path.join(root.dir, 'x.sock'));
  await new Promise((r) => unix.once('listening', r));
  t.after(() => unix.close());
  const cases = [
    ['tcp-connect', String(srv.address().port)],
    ['tcp-bind', String(await freePort())],
    ['unix-connect', path.join(root.dir, 'x.sock')],
    ['open', '/etc/passwd'],
    ['ls-root'],
    ['ptrace'],
    ['fork'],
    ['kill-parent', String(process.pid)],
  ];
  for (const c of cases) {
    const r = spawnSync(OBSPROBE, c, { encoding: 'utf8', timeout: 20000 });
    assert.equal(r.status, 0, `${c}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^PROBE ${c[0]}: DENIED: `), `${c}: ${r.stdout}`);
  }
});

// Without the seccomp filter (KP_PROBE_MODE=off: every other step stays)
// the observer's Landlock domain alone still refuses TCP: seccomp would
// otherwise kill socket() before Landlock is asked.
test('the observer\'s Landlock domain on its own refuses TCP connect and bind', { skip: !AS_ROOT && 'needs root' }, async (t) => {
  const srv = net.createServer((c) => c.end()).listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  t.after(() => srv.close());
  for (const c of [['tcp-connect', String(srv.address().port)], ['tcp-bind', String(await freePort())]]) {
    const r = spawnSync(OBSPROBE, c, { encoding: 'utf8', timeout: 20000, env: { ...process.env, KP_PROBE_MODE: 'off' } });
    assert.equal(r.status, 0, `${c}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /SANDBOX OFF: no seccomp filter in the observer/);
    assert.match(r.stdout, new RegExp(`^PROBE ${c[0]}: DENIED: (connect|bind): Permission denied`), `${c}: ${r.stdout}`);
  }
});

// Slowloris (adversarial review): clients trickling a header one byte at a
// time used to hold all 16 slots for ever (the idle timeout restarts with
// each byte), so kubelet's probe timed out and the pod was restarted. Now
// one address gets 4 slots and a request must arrive whole within 2.5 s.
// The slow clients come from 127.0.0.2 (all of 127/8 is loopback), the
// "kubelet" from 127.0.0.1, as the node's address differs from a pod's.
test('24 slow clients from one address: /healthz still answers and the slow connections are closed', async (t) => {
  const { port } = await setup(t);
  await waitFor(port, '/readyz', (r) => r.status === 200);
  const socks = [];
  let closed = 0;
  for (let i = 0; i < 24; i++) {
    const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
    s.on('error', () => {});
    s.on('close', () => { closed++; });
    s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    socks.push(s);
  }
  // A header line every 500 ms: never idle long enough for MHD's timeout.
  const iv = setInterval(() => { for (const s of socks) if (!s.destroyed) s.write('X-a: b\r\n'); }, 500);
  t.after(() => { clearInterval(iv); for (const s of socks) s.destroy(); });
  await sleep(300);
  for (let i = 0; i < 4; i++) {
    const r = await get(port, '/healthz');
    assert.equal(r.status, 200, r.body);
    await sleep(500);
  }
  // Past the deadline, every slow client is cut (not by the idle timeout,
  // which their trickle keeps resetting), none got an answer.
  await until(() => closed === socks.length, 8000, 100);
  assert.equal(closed, socks.length);
});
