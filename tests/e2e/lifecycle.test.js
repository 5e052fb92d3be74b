'use strict';
// How the plugin lives and ends (issue 14): socket files that repair
// themselves (removed, replaced by a foreign socket or file: re-created,
// kubelet registers again and prepares; unrepairable: non-zero exit with
// the reason in the termination message), the draining stop (registration
// socket first, calls in flight finish, new ones get UNAVAILABLE, within
// the grace budget), and Events on the Node from the publisher (right
// object, reason, type; counted when repeated; rate-limited under a
// storm; nothing but the fixed list from a hostile nodeserver).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { execFileSync } = require('node:child_process');
const { KubeletSim, proto, callRaw } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const { makeRoot, TestDriver, TESTDRIVER, roles, until, sleep, BUILD } = require('./lib/plugin');

const ATTACK = path.join(BUILD, 'tests', 'kp_attack');
const NOSYS = path.join(BUILD, 'tests', 'kp_nosys');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const NODE_UID = '5f0c8a36-1d2e-4a7b-9c3d-2e1f0a9b8c7d';
const DRA_PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const UNAVAILABLE = 14;
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

// The test driver (exiting non-zero when the plugin stops on its own) and
// a kubelet simulator; with kube: an API-server emulator behind it.
async function setup(t, { args = [], kube = false, binary, env = {}, simOpts = {}, registered = true, wrap = null } = {}) {
  const root = makeRoot(DRIVER);
  const termlog = path.join(root.dir, 'termination-log');
  fs.writeFileSync(termlog, '');
  let emu = null;
  const extra = [];
  if (kube) {
    const tokenFile = path.join(root.dir, 'token');
    emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile });
    fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
    const kc = path.join(root.dir, 'kubeconfig');
    fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
    extra.push('--kubeconfig', kc, '--node-name', NODE);
  }
  const drvArgs = binary ? [...extra, ...args] : ['--exit-on-stop', '--termination-log', termlog, ...extra, ...args];
  const drv = new TestDriver(root, drvArgs, {
    env, ...(wrap ? { binary: wrap[0], prefixArgs: [...wrap.slice(1), binary || TESTDRIVER] } : { binary }),
  });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    if (emu) await emu.stop();
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100, rescanMs: 200, ...simOpts }).start();
  t.after(() => sim.stop());
  if (registered) await sim.waitForDriver(DRIVER);
  return { root, drv, sim, emu, termlog };
}

async function prepareOk(sim, name) {
  const c = claim(name);
  const res = await sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 10000 });
  assert.ok(res.claims[c.uid], `no result for ${name}`);
  return res;
}

// Prepare, retried while kubelet is between registrations (as it retries).
async function prepareEventually(sim, name, timeoutMs = 20000) {
  return until(() => prepareOk(sim, name).then(() => true, () => false), timeoutMs, 200);
}

const inode = (p) => { try { return fs.lstatSync(p).ino; } catch { return null; } };
const isSocket = (p) => { try { return fs.lstatSync(p).isSocket(); } catch { return false; } };

// A new registration of the driver after `since` registrations so far.
function registrations(sim) {
  let n = 0;
  sim.on('registered', () => { n++; });
  return () => n;
}

// --- sockets that repair themselves ------------------------------------------

for (const which of ['registration', 'DRA']) {
  test(`the ${which} socket file removed from outside is re-created; kubelet registers again and prepares`, async (t) => {
    const { root, drv, sim } = await setup(t);
    const sock = which === 'DRA' ? root.draSock : root.regSock;
    await prepareOk(sim, 'before');
    const count = registrations(sim);
    const before = inode(sock);
    fs.unlinkSync(sock);
    await until(() => isSocket(sock) && inode(sock) !== before, 10000);
    await drv.stderrMatch(new RegExp(`${which} socket ${sock} was removed from outside; re-creating it`));
    await until(() => count() >= 1, 15000);
    await prepareEventually(sim, 'after');
    assert.equal(drv.proc.exitCode, null, 'the plugin keeps running');
  });
}

test('a foreign file and a stale foreign socket at the registration path are replaced back', async (t) => {
  const { root, drv, sim } = await setup(t);
  const count = registrations(sim);
  // Renamed over it: one step, or the supervisor repairs in between.
  fs.writeFileSync(`${root.regSock}.tmp`, 'not a socket');
  fs.renameSync(`${root.regSock}.tmp`, root.regSock);
  await until(() => isSocket(root.regSock), 10000);
  await drv.stderrMatch(/registration socket .* was (replaced|removed) from outside; re-creating it/);
  await until(() => count() >= 1, 15000);
  // A socket someone bound and no longer serves (a crashed instance).
  const tmp = `${root.regSock}.tmp`;
  execFileSync('/usr/bin/python3', ['-c', 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', tmp]);
  assert.ok(isSocket(tmp));
  fs.renameSync(tmp, root.regSock);
  // (Inode numbers are reused: count the repairs instead.)
  await until(() => drv.stderr.split('was replaced from outside; re-creating it').length === 3, 10000);
  await until(() => count() >= 2, 15000);
  await prepareEventually(sim, 'after');
});

test('another live instance at our socket path: this one steps aside, exits non-zero, says why in the termination log', async (t) => {
  const { root, drv, termlog } = await setup(t);
  const other = net.createServer();
  const tmp = path.join(root.registry, '.other.sock');
  await new Promise((resolve) => other.listen(tmp, resolve));
  t.after(() => other.close());
  fs.renameSync(tmp, root.regSock);
  const l = await drv.line(['plugin-stopped'], 15000);
  assert.match(l, /^plugin-stopped KP_ECHILD registration socket .* another live instance serves there; stepping aside/);
  const { code } = await drv.exited;
  assert.equal(code, 3);
  assert.match(fs.readFileSync(termlog, 'utf8'), /^registration socket \S+ another live instance serves there; stepping aside, not fighting it\n$/);
  // Its socket is left alone.
  assert.ok(isSocket(root.regSock));
});

test('unrepairable: the plugin directory removed: non-zero exit, reason in the termination log, no socket left behind', async (t) => {
  const { root, drv, termlog } = await setup(t);
  // The supervisor may re-create the socket while the directory goes.
  await until(() => {
    try { fs.rmSync(path.dirname(root.draSock), { recursive: true, force: true }); } catch { /* again */ }
    return !fs.existsSync(path.dirname(root.draSock));
  }, 10000, 1);
  const l = await drv.line(['plugin-stopped'], 15000);
  assert.match(l, /^plugin-stopped KP_ECHILD DRA socket .* is gone and cannot be re-created: listen on .*: No such file or directory/);
  assert.equal((await drv.exited).code, 3);
  const msg = fs.readFileSync(termlog, 'utf8');
  assert.match(msg, /^DRA socket \S+ is gone and cannot be re-created: .*No such file or directory\n$/);
  assert.equal(msg.split('\n').length, 2, 'one line');
  assert.ok(!fs.existsSync(root.regSock), 'registration socket removed');
});

test('the broker killed: the plugin ends (not restarted: it held the driver\'s desired state), non-zero, the reason in the termination log, no socket file and no child left', async (t) => {
  const { root, drv, termlog } = await setup(t);
  const r = roles(drv.proc.pid);
  assert.ok(r.broker && r.nodeserver && r.registrar, JSON.stringify(r));
  process.kill(r.broker, 'SIGKILL');
  const l = await drv.line(['plugin-stopped'], 15000);
  assert.match(l, /^plugin-stopped KP_ECHILD the broker ended \(wait status 0x9\) before the plugin stopped/);
  assert.equal((await drv.exited).code, 3);
  assert.match(fs.readFileSync(termlog, 'utf8'), /^the broker ended \(wait status 0x9\) before the plugin stopped\n$/);
  assert.ok(!fs.existsSync(root.regSock), 'registration socket removed');
  assert.ok(!fs.existsSync(root.draSock), 'DRA socket removed');
  for (const role of ['supervisor', 'nodeserver', 'registrar']) {
    await until(() => !fs.existsSync(`/proc/${r[role]}`) || /^State:\s+Z/m.test(fs.readFileSync(`/proc/${r[role]}/status`, 'utf8')), 10000);
  }
});

// CPU time (user + system, all threads) of pid in ms, from /proc.
function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;	// fields 14, 15; USER_HZ 100
}

test('a monitor that never answers (stopped): the broker\'s stop deadline passes and it waits idle, not spinning', async (t) => {
  const { drv } = await setup(t, { args: ['--shutdown-grace-ms', '500'] });
  const r = roles(drv.proc.pid);
  assert.ok(r.supervisor && r.broker, JSON.stringify(r));
  t.after(() => { try { process.kill(r.supervisor, 'SIGKILL'); } catch { /* gone */ } });
  process.kill(r.supervisor, 'SIGSTOP');
  // kp_stop: the broker begins its stop; its deadline is the 0.5 s grace
  // plus twice the 5 s a child gets (supervisor/drain.c).
  drv.proc.stdin.write('stop\n');
  await sleep(12000);	// past the deadline, the broker waits for the monitor
  const c0 = cpuMs(r.broker);
  await sleep(2000);
  const used = cpuMs(r.broker) - c0;
  t.diagnostic(`the broker: ${used} ms of CPU in 2 s`);
  assert.ok(used <= 200, `the broker used ${used} ms of CPU in 2 s waiting for a stopped monitor (spinning)`);
  process.kill(r.supervisor, 'SIGKILL');
});

test('unrepairable: a directory in place of the registration socket: non-zero exit, the directory is left alone', async (t) => {
  const { root, drv, termlog } = await setup(t);
  await until(() => {
    try { fs.unlinkSync(root.regSock); fs.mkdirSync(root.regSock); return true; } catch { return false; }
  }, 10000, 1);
  const l = await drv.line(['plugin-stopped'], 15000);
  assert.match(l, /registration socket .* was replaced by a directory; not removing it/);
  assert.equal((await drv.exited).code, 3);
  assert.match(fs.readFileSync(termlog, 'utf8'), /was replaced by a directory/);
  assert.ok(fs.statSync(root.regSock).isDirectory());
});

// --- draining shutdown ---------------------------------------------------------

// A prepare on a connection of its own, straight to the DRA socket (kubelet
// no longer routes to a deregistered plugin; the test still can).
async function rawPrepare(root, name) {
  const req = proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'), { claims: [claim(name)] });
  return callRaw(root.draSock, DRA_PREPARE, req, 5000);
}

test('kp_stop drains: registration socket first, a prepare in flight completes, a new one gets UNAVAILABLE, then the DRA socket goes', async (t) => {
  const { root, drv, sim } = await setup(t, { args: ['--slow-ms', '2500', '--shutdown-grace-ms', '20000'] });
  const slow = sim.nodePrepareResources(DRIVER, [claim('in-flight')], { timeoutMs: 30000 });
  await drv.stderrMatch(/handling request.*NodePrepareResources/);
  drv.proc.stdin.write('stop\n');
  await until(() => !fs.existsSync(root.regSock), 10000, 5);
  assert.ok(isSocket(root.draSock), 'the DRA socket outlives the registration socket');
  const late = await rawPrepare(root, 'late');
  assert.equal(late.code, UNAVAILABLE, `late prepare: ${late.code} ${late.details}`);
  assert.match(late.details, /draining, no new calls/);
  const res = await slow;
  assert.equal(Object.keys(res.claims).length, 1, 'the call in flight was answered');
  const l = await drv.line(['stopped'], 30000);
  assert.match(l, /^stopped 0 /);
  assert.ok(!fs.existsSync(root.draSock), 'the DRA socket is removed at the end');
  await drv.stderrMatch(/nodeserver\] nodeserver: drained/);
});

test('SIGTERM to the supervisor drains within the grace budget: a call still running then is cancelled; a clean exit', async (t) => {
  const { drv, sim } = await setup(t, { args: ['--slow-ms', '120000', '--shutdown-grace-ms', '1000'] });
  const slow = sim.nodePrepareResources(DRIVER, [claim('too-slow')], { timeoutMs: 60000 }).then(() => null, (e) => e);
  await drv.stderrMatch(/handling request.*NodePrepareResources/);
  process.kill(roles(drv.proc.pid).supervisor, 'SIGTERM');
  const l = await drv.line(['plugin-stopped'], 30000);
  assert.match(l, /^plugin-stopped KP_OK/);
  assert.equal((await drv.exited).code, 0);
  await drv.stderrMatch(/nodeserver: 1 calls still running after the 1000 ms shutdown grace: cancelling them/);
  const err = await slow;
  assert.ok(err, 'the cancelled call did not succeed');
});

// --- Events on the Node --------------------------------------------------------

const EVENTS = '/apis/events.k8s.io/v1/namespaces/default/events';
const byReason = (emu, reason) => emu.getEvents().filter((e) => e.reason === reason);

// What every Event of ours is: about the Node, from this driver's plugin.
function assertOurs(ev, { reason, type = 'Warning', action, uid = NODE_UID }) {
  assert.equal(ev.apiVersion, 'events.k8s.io/v1');
  assert.equal(ev.metadata.namespace, 'default');
  assert.deepEqual(ev.regarding, { apiVersion: 'v1', kind: 'Node', name: NODE, ...(uid ? { uid } : {}) });
  assert.equal(ev.reason, reason);
  assert.equal(ev.type, type);
  if (action) assert.equal(ev.action, action);
  assert.equal(ev.reportingController, `${DRIVER}/kubeletplugin`);
  assert.equal(ev.reportingInstance, NODE);
  assert.ok(Buffer.byteLength(ev.note) <= 1024);
}

test('a registration kubelet rejects is an Event on the Node; rejected again (socket re-created), the same Event counts 2', async (t) => {
  const { root, emu } = await setup(t, {
    kube: true, args: ['--node-uid', NODE_UID], registered: false,
    simOpts: { rejectWith: 'simulated rejection: no room for this driver' },
  });
  const first = await until(() => byReason(emu, 'RegistrationFailed')[0], 15000);
  assertOurs(first, { reason: 'RegistrationFailed', action: 'Register' });
  assert.match(first.note, /^kubelet rejected the registration: .*simulated rejection: no room for this driver/);
  assert.equal(first.series, undefined);
  // kubelet does not retry until the socket is new: make it new.
  fs.unlinkSync(root.regSock);
  const again = await until(() => {
    const e = byReason(emu, 'RegistrationFailed');
    return e.length === 1 && e[0].series && e[0].series.count === 2 ? e[0] : null;
  }, 15000);
  assert.equal(again.metadata.name, first.metadata.name, 'counted, not a second object');
  assert.ok(Date.parse(again.series.lastObservedTime) >= Date.parse(first.eventTime));
  assert.equal(emu.writes({ method: 'PATCH', path: EVENTS }).length, 1);
  // The repair is an Event of its own (Normal).
  const fixed = await until(() => byReason(emu, 'SocketRecreated')[0], 10000);
  assertOurs(fixed, { reason: 'SocketRecreated', type: 'Normal', action: 'Repair' });
});

test('a storm of sandbox denials: one Event whose count grows, writes held to the spam filter\'s burst of 25', async (t) => {
  const { emu, sim, drv } = await setup(t, { kube: true, args: ['--node-uid', NODE_UID] });
  const N = 40;
  for (let i = 0; i < N; i++) {
    const c = claim('syscall-socket');
    // The claim the publisher looks up before the hook runs.
    emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-0' }] } });
    const err = await sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 10000 }).then(() => null, (e) => e);
    assert.ok(err && err.response, `the hook fails the claim: ${err}`);
    assert.match(err.response.claims[c.uid].error, /sandbox denied socket/);
  }
  const ev = await until(() => {
    const e = byReason(emu, 'SyscallDenied');
    return e.length === 1 && e[0].series && e[0].series.count >= 25 ? e[0] : null;
  }, 15000).catch((e) => { console.log(JSON.stringify(emu.getEvents()), emu.writes({ path: EVENTS }).length, drv.stderr.split('\n').filter((l) => /event|violation|denied/.test(l)).slice(0, 20).join('\n')); throw e; });
  assertOurs(ev, { reason: 'SyscallDenied', action: 'Sandbox' });
  assert.match(ev.note, /^a driver hook called socket, which the nodeserver's sandbox denies \(EPERM\); the driver may need kp_sandbox_syscall\("socket"\)$/);
  await sleep(500);
  const writes = emu.writes({ path: EVENTS });
  assert.equal(writes.length, 25, `${writes.length} writes for ${N} denials`);
  assert.equal(writes[0].method, 'POST');
  assert.equal(byReason(emu, 'SyscallDenied')[0].series.count, 25);
});

test('a pool the API server keeps rejecting is an Event naming the pool', async (t) => {
  const { emu, drv } = await setup(t, { kube: true, args: ['--node-uid', NODE_UID] });
  emu.inject({ method: 'POST', path: '/apis/resource.k8s.io/v1/resourceslices', action: 'status', status: 422,
    message: 'simulated: the pool is refused', times: Infinity });
  assert.match(await drv.command('publish 1', 'publish'), /^publish KP_OK/);
  const ev = await until(() => byReason(emu, 'ResourceSliceRejected')[0], 20000);
  assertOurs(ev, { reason: 'ResourceSliceRejected', action: 'PublishResources' });
  assert.match(ev.note, /^the API server keeps rejecting the ResourceSlices of pool pool-0: /);
});

test('a child the sandbox kills is an Event; repeated kills are one Event counted again', async (t) => {
  const { emu } = await setup(t, {
    kube: true, args: ['--node-uid', NODE_UID, '--interceptors'], registered: false, env: { KP_TEST_REGISTRAR_SYSCALL: 'ptrace' },
  });
  // kubelet's GetInfo makes the registrar call ptrace: SIGSYS, restart,
  // kubelet retries, again.
  const ev = await until(() => {
    const e = byReason(emu, 'SandboxKilled');
    return e.length === 1 && e[0].series && e[0].series.count >= 2 ? e[0] : null;
  }, 20000);
  assertOurs(ev, { reason: 'SandboxKilled', action: 'Sandbox' });
  assert.equal(ev.note, 'the registrar was killed by its sandbox (seccomp, SIGSYS) and is restarted');
});

test('the emulator validates Events as the API server does', async (t) => {
  const { emu } = await setup(t, { kube: true, registered: false });
  const https = require('node:https');
  const post = (body, ns = 'default') => new Promise((resolve, reject) => {
    const req = https.request(`${emu.url}/apis/events.k8s.io/v1/namespaces/${ns}/events`, {
      method: 'POST', ca: emu.caPem, headers: { Authorization: `Bearer ${emu.token}`, 'Content-Type': 'application/json' },
    }, (res) => { let b = ''; res.on('data', (d) => { b += d; }); res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(b) })); });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  const good = {
    metadata: { name: 'n.1' }, eventTime: new Date().toISOString(), reportingController: 'x.example.com/plugin',
    reportingInstance: 'node-1', action: 'A', reason: 'R', type: 'Warning', note: 'ok', regarding: { kind: 'Node', name: 'node-1' },
  };
  assert.equal((await post(good)).status, 201);
  const bad = await post({ ...good, metadata: { name: 'n.2' }, eventTime: undefined, type: 'Error', note: 'x'.repeat(1025), reportingController: 'bad name!' });
  assert.equal(bad.status, 422);
  const fields = bad.body.details.causes.map((c) => c.field).sort();
  assert.deepEqual(fields, ['eventTime', 'message', 'reportingController', 'type']);
  const wrongNs = await post({ ...good, metadata: { name: 'n.3' } }, 'kube-public');
  assert.equal(wrongNs.status, 422);
  assert.match(wrongNs.body.message, /involvedObject.namespace/);
});

// A compromised nodeserver (tests/e2e/bin/kp_attack.c) writes raw EventAsk
// frames. It may name a syscall; it may not pick another kind, write free
// text, or get an Event out of a frame that breaks the rules.
test('ATTACK: a hostile nodeserver gets no Event beyond its one kind and a syscall name', async (t) => {
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-lc-attack-'));
  fs.chmodSync(probes, 0o755);
  t.after(() => fs.rmSync(probes, { recursive: true, force: true }));
  const { emu, drv, sim } = await setup(t, { kube: true, binary: ATTACK, args: ['--read-path', probes], env: { KP_ATTACK_DIR: probes } });
  const hex = (s) => Buffer.from(s).toString('hex');
  let n = 0;
  const restarts = () => drv.stderr.split('nodeserver ready').length;
  const run = async (spec) => {
    n++;
    fs.writeFileSync(path.join(probes, String(n)), `${spec}\n`);
    const c = claim(`probe-${n}`);
    emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-0' }] } });
    const before = restarts();
    const out = await sim.nodePrepareResources(DRIVER, [c], { timeoutMs: 10000 }).then(() => 'prepared', (e) => e.message);
    return { out, before };
  };
  const violation = async (spec, why) => {
    const { before } = await run(spec);
    await drv.stderrMatch(new RegExp(`nodeserver: protocol violation: ${why}`));
    await until(() => restarts() > before, 15000);	// restarted
  };
  await violation(`raw-event:5:${hex('socket')}`, 'event_ask.syscall: must be empty for EVENT_JOURNAL_CORRUPT');
  await violation(`raw-event:7:${hex('socket')}`, 'event_ask.kind 7: only EVENT_SYSCALL_DENIED and EVENT_JOURNAL_CORRUPT may be asked for');
  await violation(`raw-event:3:${hex('sock\nFORGED')}`, 'event_ask.syscall: byte 4 is not one of \\[a-z0-9_\\]');
  await violation(`raw-event:3:${hex('a'.repeat(33))}`, 'event_ask.syscall: 33 bytes, must be 1 to 32');
  // Within the rules: the note is the supervisor's, naming the syscall.
  await until(async () => /raw-event: sent/.test((await run(`raw-event:3:${hex('ptrace')}`)).out), 15000, 200);
  const ev = await until(() => byReason(emu, 'SyscallDenied')[0], 10000);
  assertOurs(ev, { reason: 'SyscallDenied', uid: null });
  assert.match(ev.note, /^a driver hook called ptrace, which the nodeserver's sandbox denies/);
  await sleep(300);
  const all = emu.getEvents();
  assert.deepEqual(all.map((e) => e.reason), ['SyscallDenied'], JSON.stringify(all));
  assert.ok(!JSON.stringify(all).includes('FORGED'));
});

// Without inotify (a kernel or profile without it: here a seccomp filter on
// the driver's process tree alone) the supervisor still finds a socket
// file removed or replaced, by the inode check it makes every second.
test('without inotify: a DRA socket file replaced by a regular file is found by the periodic inode check and re-created', async (t) => {
  const { root, drv, sim } = await setup(t, { wrap: [NOSYS, 'inotify_init1,inotify_init'] });
  await drv.stderrMatch(/inotify_init1: socket files are checked every 1000 ms only: Function not implemented/);
  await prepareOk(sim, 'before');
  const count = registrations(sim);
  const before = inode(root.draSock);
  fs.unlinkSync(root.draSock);
  fs.writeFileSync(root.draSock, 'not a socket\n');
  await until(() => isSocket(root.draSock) && inode(root.draSock) !== before, 10000);
  await drv.stderrMatch(new RegExp(`DRA socket ${root.draSock} was replaced from outside; re-creating it`));
  await until(() => count() >= 1, 15000);
  await prepareEventually(sim, 'after');
  assert.equal(drv.proc.exitCode, null, 'the plugin keeps running');
});

// --- the socket's directory swapped for a symlink -------------------------------

// Whoever can write in plugins/ renames plugins/<driver> away and puts a
// symlink to a directory it cannot write in its place: the root supervisor
// must neither remove the file named like our socket there nor bind there.
test('unrepairable: the DRA socket directory replaced by a symlink: the foreign file stays, the plugin stops with the reason', async (t) => {
  const { root, drv, termlog } = await setup(t);
  const victim = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-victim-'));
  t.after(() => fs.rmSync(victim, { recursive: true, force: true }));
  const foreign = path.join(victim, path.basename(root.draSock));
  fs.writeFileSync(foreign, 'not ours\n');
  const dir = path.dirname(root.draSock);
  fs.renameSync(dir, dir + '.old');
  fs.symlinkSync(victim, dir);
  const l = await drv.line(['plugin-stopped'], 15000);
  assert.match(l, /^plugin-stopped KP_ECHILD DRA socket \S+: listen on \S+: \S+ is a symbolic link or not a directory/);
  assert.equal((await drv.exited).code, 3);
  assert.match(fs.readFileSync(termlog, 'utf8'), /^DRA socket \S+: listen on .* is a symbolic link/);
  assert.equal(fs.readFileSync(foreign, 'utf8'), 'not ours\n', 'the foreign file is untouched');
  assert.deepEqual(fs.readdirSync(victim), [path.basename(root.draSock)], 'nothing bound in the foreign directory');
  // Our own socket, in our renamed directory, is removed at stop.
  assert.ok(!fs.existsSync(path.join(dir + '.old', path.basename(root.draSock))));
});
