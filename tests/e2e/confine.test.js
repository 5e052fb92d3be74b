'use strict';
// kp_policy_main_confine (include/kubeletplugin.h; docs/security.md, "The
// pod's profile"): the driver process loads the pod's profile on itself,
// on every thread, once kp_start() started the plugin. What a privileged
// pod (deploy/components/device-driver) has in place of the profile its
// container runtime does not apply. The driver is a loop-device driver's
// main() (tests/e2e/bin/kp_testdriver.c: --main-confine, --main-ioctl,
// command "loopctl": LOOP_CTL_GET_FREE on /dev/loop-control) against
// the kubelet simulator and the API-server emulator. make check runs it
// against the ASan build too, where LeakSanitizer checks the confined
// driver process as it exits (policy/syscalls.c sanitizer_driver[]).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { makeRoot, withApi, roles, until, procStatus, isAlive } = require('./lib/plugin');

const DRIVER = 'loop.example.com';
const LOOP_CTL_GET_FREE = '0x4C82';
const LOOP = fs.existsSync('/dev/loop-control') && process.getuid() === 0;

// Seccomp and NoNewPrivs of every thread of pid: { tid: "2/0" }.
function threads(pid) {
  const out = {};
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    const s = procStatus(`${pid}/task/${tid}`);
    if (s) out[tid] = `${s.Seccomp}/${s.NoNewPrivs}`;
  }
  return out;
}

// A running driver with args, registered with a kubelet simulator.
async function setup(t, args, extra = ['--channels']) {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const { drv, emu } = await withApi(t, root, [...extra, ...args]);
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  return { drv, sim, emu, pid: await drv.pid() };
}

// Prepare, unprepare, publish: the plugin works with main() confined.
async function works(drv, sim, emu) {
  const c = { namespace: 'default', name: 'c1', uid: randomUUID() };
  emu.addClaim({ ...c, allocation: { results: [{ request: 'loop', driver: DRIVER, pool: 'node-1', device: 'loop-0' }] } });
  const res = await sim.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices.length, 1, JSON.stringify(res));
  assert.ok(!res.claims[c.uid].error, JSON.stringify(res));
  const un = await sim.nodeUnprepareResources(DRIVER, [c]);
  assert.deepEqual(Object.keys(un.claims), [c.uid]);
  const l = await drv.command('publish 3', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await until(() => emu.getSlices({ fieldSelector: `spec.driver=${DRIVER}` }).length === 1, 15000, 100);
}

test('without kp_policy_main_confine the driver process runs unconfined (Seccomp 0)', async (t) => {
  const { drv, sim, emu, pid } = await setup(t, []);
  const th = threads(pid);
  assert.ok(Object.keys(th).length >= 3, JSON.stringify(th));
  for (const [tid, v] of Object.entries(th)) assert.equal(v.split('/')[0], '0', `thread ${tid}`);
  if (LOOP) assert.match(await drv.command('loopctl', 'loopctl'), /^loopctl loop\d+$/);
  await works(drv, sim, emu);
  const st = await drv.stop();
  assert.equal(st.code, 0);
});

test('kp_policy_main_confine: every thread Seccomp 2; the declared ioctl works, the plugin serves and stops', async (t) => {
  const { drv, sim, emu, pid } = await setup(t, ['--main-confine', '--main-ioctl', LOOP_CTL_GET_FREE]);
  const th = threads(pid);
  // main() and the library's event thread, started before the filter
  // (kp_start() refuses a process with threads of the driver's), and
  // --channels' status thread, started after it.
  assert.ok(Object.keys(th).length >= 3, JSON.stringify(th));
  // Root holds CAP_SYS_ADMIN: no NO_NEW_PRIVS needed.
  for (const [tid, v] of Object.entries(th)) assert.equal(v, process.getuid() === 0 ? '2/0' : '2/1', `thread ${tid}`);
  await drv.stderrMatch(/sandbox: driver process, seccomp enforce on every thread/);
  // The monitor was forked before: the driver's filter is not its own
  // (it has its own union, without the driver's declarations).
  const sup = roles(pid).supervisor;
  assert.ok(sup && isAlive(sup));
  if (LOOP) assert.match(await drv.command('loopctl', 'loopctl'), /^loopctl loop\d+$/);
  else t.diagnostic('no /dev/loop-control or not root: LOOP_CTL_GET_FREE not tried');
  await works(drv, sim, emu);
  const st = await drv.stop();
  assert.equal(st.code, 0, drv.stderr);
  assert.equal(st.fdsAfter, st.fdsBefore, 'kp_stop() under the filter closed every fd it made');
  const ex = await drv.exited;
  assert.equal(ex.code, 0, drv.stderr);
  assert.ok(!isAlive(sup), 'the monitor was reaped');
});

test('kp_policy_main_confine: an undeclared ioctl from main() after kp_start() gets EPERM', { skip: !LOOP && 'needs root and /dev/loop-control' }, async (t) => {
  const { drv, sim, emu } = await setup(t, ['--main-confine']);
  assert.equal(await drv.command('loopctl', 'loopctl'), 'loopctl EPERM ioctl');
  await works(drv, sim, emu);
  assert.equal((await drv.stop()).code, 0);
  assert.equal((await drv.exited).code, 0, drv.stderr);
});

test('kp_policy_main_confine: kp_stop() and kp_start() again from the confined process; the second filter stacks', async (t) => {
  const { drv, sim, emu, pid } = await setup(t, ['--main-confine', '--start-twice'], []);
  const filters = () => Object.keys(threads(pid)).map((tid) => procStatus(`${pid}/task/${tid}`).Seccomp_filters);
  assert.ok(filters().every((n) => n === '1'), filters().join(','));
  assert.equal(await drv.command('restart', 'restart'), 'restart KP_OK ');
  // The new monitor was forked under the driver's filter: the union
  // allows its start-up and every child's.
  await sim.waitFor('registered', (i) => i.name === DRIVER, 30000);
  assert.ok(filters().every((n) => n === '2'), filters().join(','));
  await works(drv, sim, emu);
  assert.equal((await drv.stop()).code, 0);
  assert.equal((await drv.exited).code, 0, drv.stderr);
});
