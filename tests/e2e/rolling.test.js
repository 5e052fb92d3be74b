'use strict';
// End-to-end tests of rolling updates and the registration controls
// (issue 11): two instances of one driver side by side with per-instance
// sockets (names as the Go helper v0.37), both registered with a 1.34+
// kubelet simulator, which calls the newest connected one; stopping one
// leaves the other's sockets; hooks serialized across the processes
// through serialize.lock, also against a stand-in for each Go helper's
// way of locking it (tests/e2e/bin/kp_golock.c); the GetInfo and
// NotifyRegistrationStatus error knobs as kubelet sees them; and
// registration-only and DRA-only instances.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const readline = require('node:readline');
const { KubeletSim, proto } = require('../kubelet-sim');
const { rawUnary, callRaw } = require('../kubelet-sim/grpc-util');
const { makeRoot, TestDriver, BUILD, until, sleep, roles, giveToNodeserver } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const UID_A = '11111111-2222-3333-4444-aaaaaaaaaaaa';
const UID_B = '11111111-2222-3333-4444-bbbbbbbbbbbb';
const GOLOCK = path.join(BUILD, 'tests', 'kp_golock');

// A kubelet root with a state directory both instances' hooks write
// their enter/leave lines to (kp_testdriver --counter-file).
function rollingRoot(t) {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  root.state = path.join(root.dir, 'state');
  giveToNodeserver(root.state);
  root.counter = path.join(root.state, 'hooks.log');
  // Whoever creates it (a hook, kp_golock as root), every process may
  // append: the nodeserver runs as its own uid.
  fs.writeFileSync(root.counter, '');
  fs.chmodSync(root.counter, 0o666);
  root.pluginDir = path.dirname(root.draSock);
  root.lock = path.join(root.pluginDir, 'serialize.lock');
  return root;
}

function instance(t, root, tag, uid, extra = []) {
  const drv = new TestDriver(root, ['--kubelet-root-dir', root.dir, '--rolling-update-uid', uid,
    '--state-dir', root.state, '--counter-file', root.counter, '--tag', tag, ...extra], { paths: false });
  t.after(async () => {
    drv.kill();
    await drv.exited;
  });
  return drv;
}

function simFor(t, root, version = '1.34', extra = {}) {
  const sim = new KubeletSim({ registryDir: root.registry, version, retryInitialMs: 100, healthStream: false, ...extra }).start();
  t.after(() => sim.stop());
  return sim;
}

const hookLines = (root) => (fs.existsSync(root.counter) ? fs.readFileSync(root.counter, 'utf8').trim().split('\n').filter(Boolean) : []);

// The tags of the instances whose hooks ran, in order of entry.
const entered = (root) => hookLines(root).filter((l) => l.startsWith('enter ')).map((l) => l.split(' ')[1]);

// Never two hooks inside at once, whichever process they ran in.
function assertNoOverlap(lines) {
  let inside = null;
  for (const l of lines) {
    const [what, who] = l.split(' ');
    if (what === 'enter') {
      assert.equal(inside, null, `hook of ${who} entered while ${inside}'s was inside:\n${lines.join('\n')}`);
      inside = who;
    } else if (what === 'leave') {
      assert.equal(inside, who, `unbalanced leave:\n${lines.join('\n')}`);
      inside = null;
    }
  }
}

const claim = (n) => ({ namespace: 'default', name: `claim-${n}`, uid: `00000000-0000-0000-0000-${String(n).padStart(12, '0')}` });

// A prepare sent to one given instance (kubelet would pick the newest).
async function prepareAt(inst, n) {
  const body = proto.encode(proto.typeName(inst.api, 'NodePrepareResourcesRequest'), { claims: [claim(n)] });
  const res = await rawUnary(inst.client, `${inst.servicePrefix}NodePrepareResources`, body, 45000);
  assert.equal(res.code, 0, `prepare at ${inst.endpoint}: ${res.details}`);
}

async function bothConnected(sim) {
  return until(() => {
    const list = sim.store.get(DRIVER) || [];
    return list.length === 2 && list.every((i) => i.connected) ? list : null;
  }, 15000);
}

// A's and B's instances: the store's order is the order the two
// registrations finished in, which either may win.
async function instancesAB(sim) {
  const list = await bothConnected(sim);
  const of = (uid) => list.find((i) => i.endpoint.endsWith(`dra-${uid}.sock`));
  return [of(UID_A), of(UID_B)];
}

test('two instances side by side: distinct sockets, both registered, calls go to the newest; stopping one leaves the other', async (t) => {
  const root = rollingRoot(t);
  const a = instance(t, root, 'A', UID_A);
  await a.ready();
  const sim = simFor(t, root, '1.34');
  await sim.waitForDriver(DRIVER);
  const b = instance(t, root, 'B', UID_B);
  await b.ready();
  const sockA = { reg: path.join(root.registry, `${DRIVER}-${UID_A}-reg.sock`), dra: path.join(root.pluginDir, `dra-${UID_A}.sock`) };
  const sockB = { reg: path.join(root.registry, `${DRIVER}-${UID_B}-reg.sock`), dra: path.join(root.pluginDir, `dra-${UID_B}.sock`) };
  for (const p of [sockA.reg, sockA.dra, sockB.reg, sockB.dra]) assert.ok(fs.lstatSync(p).isSocket(), p);
  assert.doesNotMatch(b.stderr, /replacing a live socket/, 'B left A\'s sockets alone');
  const list = await bothConnected(sim);
  assert.deepEqual(list.map((i) => i.endpoint), [sockA.dra, sockB.dra]);

  await sim.nodePrepareResources(DRIVER, [claim(1)]);
  await sim.nodeUnprepareResources(DRIVER, [claim(1)]);
  assert.deepEqual(entered(root), ['B', 'B'], 'kubelet 1.34+ calls the newest connected instance');

  const st = await b.stop();
  assert.equal(st.code, 0);
  assert.ok(!fs.existsSync(sockB.reg) && !fs.existsSync(sockB.dra), 'B removed its own sockets');
  assert.ok(fs.lstatSync(sockA.reg).isSocket() && fs.lstatSync(sockA.dra).isSocket(), 'A\'s sockets are still there');
  await until(() => (sim.store.get(DRIVER) || []).length === 1, 10000);
  await sim.nodePrepareResources(DRIVER, [claim(2)]);
  assert.deepEqual(entered(root), ['B', 'B', 'A'], 'with B gone, A serves');
  assert.equal((await a.status()).state, 1, 'A stays registered');
});

// A driver name long enough that dra-<uid>.sock would not fit in
// sun_path (the Go helper would fail to listen, kubernetes#142002): two
// instances get the shortened names (base64url of SHA-256 of the UID,
// computed here with node's crypto), kubelet is told them and calls them.
test("a long driver name: each instance's DRA socket is shortened to fit, registered and served", async (t) => {
  const crypto = require('node:crypto');
  const long = `${'x'.repeat(38)}.example.com`;
  const root = makeRoot(long);
  t.after(() => root.cleanup());
  root.state = path.join(root.dir, 'state');
  giveToNodeserver(root.state);
  const pluginDir = path.dirname(root.draSock);
  assert.ok(`${pluginDir}/dra-${UID_A}.sock`.length > 107, 'the test needs a path upstream could not bind');
  const short = (uid) => crypto.createHash('sha256').update(uid).digest().subarray(0, 8).toString('base64url');
  const want = (uid) => [`dra-${short(uid)}.sock`, `${short(uid)}.sock`].map((n) => path.join(pluginDir, n)).find((p) => p.length < 108);
  const sim = simFor(t, root, '1.35');
  const insts = [];
  for (const [tag, uid] of [['A', UID_A], ['B', UID_B]]) {
    const drv = new TestDriver(root, ['--kubelet-root-dir', root.dir, '--rolling-update-uid', uid, '--state-dir', root.state, '--tag', tag], { paths: false });
    t.after(async () => { drv.kill(); await drv.exited; });
    await drv.ready();
    assert.ok(fs.lstatSync(want(uid)).isSocket(), `${want(uid)}\n${drv.stderr}`);
    insts.push(drv);
  }
  assert.notEqual(want(UID_A), want(UID_B));
  const list = await until(() => {
    const l = sim.store.get(long) || [];
    return l.length === 2 && l.every((i) => i.connected) ? l : null;
  }, 15000);
  assert.deepEqual(list.map((i) => i.endpoint).sort(), [want(UID_A), want(UID_B)].sort());
  const res = await sim.nodePrepareResources(long, [claim(7)]);
  assert.equal(res.claims[claim(7).uid].error || '', '', JSON.stringify(res));
  const st = await insts[1].stop();
  assert.equal(st.code, 0);
  assert.ok(!fs.existsSync(want(UID_B)) && fs.lstatSync(want(UID_A)).isSocket(), 'B removed only its own socket');
});

test('serialize.lock: hooks never overlap across instances; the nodeserver holds the file read-only', async (t) => {
  const root = rollingRoot(t);
  const a = instance(t, root, 'A', UID_A, ['--slow-ms', '150']);
  const b = instance(t, root, 'B', UID_B, ['--slow-ms', '150']);
  await a.ready();
  await b.ready();
  const sim = simFor(t, root, '1.37');
  const [ia, ib] = await instancesAB(sim);
  const st = fs.lstatSync(root.lock);
  assert.ok(st.isFile(), 'serialize.lock in the plugin data directory');
  assert.equal(st.mode & 0o777, 0o644);
  assert.equal(st.uid, process.getuid(), 'the supervisor created it');

  // Three calls at each instance at once: six hooks of 150 ms.
  await Promise.all([1, 2, 3].flatMap((n) => [prepareAt(ia, n), prepareAt(ib, 10 + n)]));
  const lines = hookLines(root);
  assert.equal(lines.filter((l) => l.startsWith('enter')).length, 6);
  assert.deepEqual(new Set(entered(root)), new Set(['A', 'B']), 'both instances ran hooks');
  assertNoOverlap(lines);

  // The hostile-nodeserver view: its one handle on the lock file is a
  // read-only fd (fdinfo flags, O_ACCMODE == O_RDONLY).
  const ns = roles(await a.pid()).nodeserver;
  const fds = fs.readdirSync(`/proc/${ns}/fd`).filter((fd) => {
    try { return fs.readlinkSync(`/proc/${ns}/fd/${fd}`) === root.lock; } catch { return false; }
  });
  assert.equal(fds.length, 1, 'the nodeserver has the lock file open once');
  const flags = /flags:\s+(\d+)/.exec(fs.readFileSync(`/proc/${ns}/fdinfo/${fds[0]}`, 'utf8'))[1];
  assert.equal(parseInt(flags, 8) & 3, 0, 'O_RDONLY');
});

test('a nodeserver killed inside a hook does not leave serialize.lock held', async (t) => {
  const root = rollingRoot(t);
  const a = instance(t, root, 'A', UID_A, ['--slow-ms', '30000']);
  const b = instance(t, root, 'B', UID_B);
  await a.ready();
  await b.ready();
  const sim = simFor(t, root, '1.37');
  const [ia, ib] = await instancesAB(sim);
  const stuck = prepareAt(ia, 1).catch(() => {});	// fails when killed
  await until(() => entered(root).includes('A'), 10000);
  const ns = roles(await a.pid()).nodeserver;
  process.kill(ns, 'SIGKILL');
  // B's hook runs: the dead nodeserver's locks went with it (were the
  // file's description shared with the supervisor, B would wait for ever;
  // 20 s is only this test's bound on that failure).
  const body = proto.encode(proto.typeName(ib.api, 'NodePrepareResourcesRequest'), { claims: [claim(2)] });
  const res = await rawUnary(ib.client, `${ib.servicePrefix}NodePrepareResources`, body, 20000);
  assert.equal(res.code, 0, `B's prepare: ${res.details}`);
  assert.deepEqual(entered(root), ['A', 'B']);
  await stuck;
  // A's restarted nodeserver takes the lock again with a fresh fd.
  await a.stderrMatch(/nodeserver ready, pid \d+ \(restarted\)/, 15000);
});

test('ATTACK: a hostile hook cannot write, truncate, chmod or reopen serialize.lock for writing', async (t) => {
  const root = rollingRoot(t);
  const a = instance(t, root, 'A', UID_A);
  await a.ready();
  fs.writeFileSync(root.lock, 'keep');	// content to protect (root's file)
  const sim = simFor(t, root, '1.37');
  await sim.waitForDriver(DRIVER);
  await until(() => sim.getDriver(DRIVER).connected, 10000);
  await sim.nodePrepareResources(DRIVER, [{ namespace: 'default', name: 'lockfd-1', uid: claim(1).uid }]);
  await a.stderrMatch(/lockfd (found|none)[^\n]*/);
  const m = /lockfd found write=(\d+) truncate=(\d+) chmod=(\d+) reopen=(\d+)/.exec(a.stderr);
  assert.ok(m, `the hook found its lock fd:\n${a.stderr}`);
  const [, w, tr, ch, re] = m.map(Number);
  assert.notEqual(w, 0, 'write refused');
  assert.notEqual(tr, 0, 'ftruncate refused');
  assert.notEqual(ch, 0, 'fchmod refused');
  assert.notEqual(re, 0, 'reopening through /proc/self/fd for writing refused');
  assert.equal(fs.readFileSync(root.lock, 'utf8'), 'keep');
  assert.equal(fs.statSync(root.lock).mode & 0o777, 0o644);
});

for (const kind of ['ofd', 'flock']) {
  test(`a prepare waits while a Go helper holds serialize.lock (${kind === 'ofd' ? 'released helpers: OFD write lock' : 'newer upstream copy: flock'})`, async (t) => {
    const root = rollingRoot(t);
    const a = instance(t, root, 'A', UID_A);
    await a.ready();
    const sim = simFor(t, root, '1.34');
    await sim.waitForDriver(DRIVER);
    await until(() => sim.getDriver(DRIVER).connected, 10000);
    const go = spawn(GOLOCK, [kind, root.lock, root.counter], { stdio: ['pipe', 'pipe', 'inherit'] });
    t.after(() => { try { go.kill('SIGKILL'); } catch { /* gone */ } });
    const out = readline.createInterface({ input: go.stdout });
    const lines = [];
    out.on('line', (l) => lines.push(l));
    await until(() => lines.includes('locked'), 10000);

    const call = sim.nodePrepareResources(DRIVER, [claim(1)]);
    // Time for the hook to run if the lock did not hold it back; the
    // order in the log below is what is asserted, not this delay.
    await sleep(700);
    go.stdin.write('\n');
    await call;
    await until(() => lines.includes('released'), 10000);
    assert.deepEqual(hookLines(root).map((l) => l.split(' ')[0]), ['golock-hold', 'golock-release', 'enter', 'leave'],
      'the hook entered only after the Go-style holder released the lock');
  });
}

test('GetInfo and NotifyRegistrationStatus error knobs, as kubelet sees them', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const drv = new TestDriver(root, ['--kubelet-root-dir', root.dir], { paths: false });
  t.after(async () => { drv.kill(); await drv.exited; });
  await drv.ready();
  assert.match(await drv.command('getinfo-error simulated GetInfo failure', 'regerr'), /^regerr KP_OK/);
  const sim = simFor(t, root, '1.36');
  const failed = await sim.waitFor('registrationFailed', (e) => e.stage === 'getInfo', 10000);
  assert.match(failed.error, /failed to get plugin info using RPC GetInfo .*rpc error: code = Unknown desc = simulated GetInfo failure/);
  assert.equal((await drv.status()).state, 0, 'not registered');
  assert.match(await drv.command('getinfo-error', 'regerr'), /^regerr KP_OK/);
  await sim.waitForDriver(DRIVER);
  assert.equal((await drv.status()).state, 1, 'registered once GetInfo succeeds (1.36 retries)');

  // A bad message is refused by the driver-side check, naming the rule.
  assert.match(await drv.command(`notify-error ${'x'.repeat(1100)}`, 'regerr'), /^regerr KP_EINVAL kp_set_notify_registration_status_error: message: must be at most 1024 bytes/);

  // The notify knob: kubelet's verdict gets an error, and is not recorded.
  // A 1.35 kubelet keeps the registration (the error is only logged).
  const root2 = makeRoot('other.example.com');
  t.after(() => root2.cleanup());
  const drv2 = new TestDriver(root2, ['--kubelet-root-dir', root2.dir], { paths: false });
  t.after(async () => { drv2.kill(); await drv2.exited; });
  await drv2.ready();
  assert.match(await drv2.command('notify-error simulated notify failure', 'regerr'), /^regerr KP_OK/);
  const sim2 = simFor(t, root2, '1.35');
  const inst = await sim2.waitForDriver('other.example.com');
  await until(() => inst.notifyError, 10000);
  assert.match(inst.notifyError, /rpc error: code = Unknown desc = simulated notify failure/);
  assert.equal((await drv2.status()).state, 0, 'the failed notification was not recorded');
  await sim2.stop();
  // 1.36+ (PR #133335) undoes such a registration and retries it with
  // backoff: registered once the knob is cleared.
  const sim3 = simFor(t, root2, '1.37');
  const failed3 = await sim3.waitFor('registrationFailed', (e) => e.stage === 'notify', 10000);
  assert.equal(failed3.retry, true);
  assert.match(failed3.error, /failed to send registration status .*simulated notify failure/);
  assert.equal(sim3.getDriver('other.example.com'), undefined, 'not registered while Notify fails');
  assert.match(await drv2.command('notify-error', 'regerr'), /^regerr KP_OK/);
  await sim3.waitForDriver('other.example.com');
  await until(async () => (await drv2.status()).state === 1, 10000);
});

test('registration-only and DRA-only instances', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const reg = new TestDriver(root, ['--kubelet-root-dir', root.dir, '--no-dra'], { paths: false });
  t.after(async () => { reg.kill(); await reg.exited; });
  await reg.ready();
  assert.ok(fs.lstatSync(root.regSock).isSocket(), 'registration socket');
  assert.ok(!fs.existsSync(root.draSock), 'no DRA socket');
  const r = roles(await reg.pid());
  assert.ok(r.registrar && !r.nodeserver, `a registrar and no nodeserver: ${JSON.stringify(r)}`);
  const sim = simFor(t, root, '1.37');
  const inst = await sim.waitForDriver(DRIVER);
  assert.equal(inst.endpoint, root.draSock, 'the DRA endpoint is still advertised');

  // The DRA side, in its own process (as a split deployment would run it).
  const dra = new TestDriver(root, ['--kubelet-root-dir', root.dir, '--no-registration'], { paths: false });
  t.after(async () => { dra.kill(); await dra.exited; });
  await dra.ready();
  assert.ok(fs.lstatSync(root.draSock).isSocket(), 'DRA socket');
  const d = roles(await dra.pid());
  assert.ok(d.nodeserver && !d.registrar, `a nodeserver and no registrar: ${JSON.stringify(d)}`);
  // kubelet dialled the endpoint before it existed: wait for its retry.
  await until(() => sim.getDriver(DRIVER).connected, 20000);
  const res = await sim.nodePrepareResources(DRIVER, [claim(1)]);
  assert.ok(res.claims[claim(1).uid], 'the kubelet, registered through one process, is served by the other');
  const body = proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'), { claims: [claim(2)] });
  assert.equal((await callRaw(root.draSock, '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources', body)).code, 0);
  assert.match(await dra.command('getinfo-error x', 'regerr'), /^regerr KP_EINVAL .*registration service is off/);
  const st = await dra.stop();
  assert.equal(st.code, 0);
  assert.ok(fs.lstatSync(root.regSock).isSocket(), 'the DRA-only instance did not touch the registration socket');
});

test('the example PCI driver: default socket paths from --kubelet-dir, per-instance ones with POD_UID', async (t) => {
  const { PCI_DRIVER } = require('./lib/plugin');
  const root = makeRoot('pci.example.com');
  t.after(() => root.cleanup());
  fs.rmSync(path.dirname(root.draSock), { recursive: true });
  const state = path.join(root.dir, 'state');
  const cdi = path.join(root.dir, 'cdi');
  giveToNodeserver(state);
  fs.mkdirSync(cdi, { recursive: true }); // root's, as on a node
  const run = (env) => {
    const proc = spawn(PCI_DRIVER, ['--kubelet-dir', root.dir, '--state-dir', state, '--cdi-dir', cdi,
      '--sysfs-root', '/sys', '--rescan', '0'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    const d = { proc, stderr: '' };
    proc.stderr.on('data', (b) => { d.stderr += b.toString(); });
    d.exited = new Promise((resolve) => proc.on('close', (code) => resolve(code)));
    t.after(async () => { try { proc.kill('SIGKILL'); } catch { /* gone */ } await d.exited; });
    return d;
  };
  const sim = simFor(t, root, '1.35');
  const first = run({ POD_UID: '' });
  await until(() => /pci-driver: serving/.test(first.stderr) || first.proc.exitCode !== null, 15000);
  assert.ok(fs.lstatSync(root.regSock).isSocket(), `${root.regSock}\n${first.stderr}`);
  assert.ok(fs.lstatSync(root.draSock).isSocket(), root.draSock);
  assert.equal((await sim.waitForDriver('pci.example.com')).endpoint, root.draSock);
  first.proc.kill('SIGTERM');
  assert.equal(await first.exited, 0);
  assert.ok(!fs.existsSync(root.regSock) && !fs.existsSync(root.draSock), 'removed at SIGTERM');

  const second = run({ POD_UID: UID_A });
  await until(() => /pci-driver: serving/.test(second.stderr) || second.proc.exitCode !== null, 15000);
  const dra = path.join(path.dirname(root.draSock), `dra-${UID_A}.sock`);
  assert.ok(fs.lstatSync(path.join(root.registry, `pci.example.com-${UID_A}-reg.sock`)).isSocket(), second.stderr);
  assert.ok(fs.lstatSync(dra).isSocket());
  await until(() => sim.getDriver('pci.example.com')?.endpoint === dra, 10000);
});
