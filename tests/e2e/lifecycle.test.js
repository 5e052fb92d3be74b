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
const { makeRoot, TestDriver, roles, until, sleep, BUILD } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const NODE_UID = '5f0c8a36-1d2e-4a7b-9c3d-2e1f0a9b8c7d';
const DRA_PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const UNAVAILABLE = 14;
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

// The test driver (exiting non-zero when the plugin stops on its own) and
// a kubelet simulator; with kube: an API-server emulator behind it.
async function setup(t, { args = [], kube = false, binary, env = {} } = {}) {
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
  const drv = new TestDriver(root, drvArgs, { binary, env });
  t.after(async () => {
    drv.kill();
    await drv.exited;
    if (emu) await emu.stop();
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100, rescanMs: 200 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
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
