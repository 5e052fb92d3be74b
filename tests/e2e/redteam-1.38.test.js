'use strict';
// Red team of the 1.38 publishing rules (84480d0), kp_state_initial()
// (78364cc) and the error texts cut by base/msg.c (e8de162).
//
//   KP_BUILD=build node --test --test-concurrency=1 tests/e2e/redteam-1.38.test.js
//
// Each test asserts what SHOULD hold; a failing test is a finding (see the
// comment above it). On 87ccb5c: 1-3 fail (findings), 4-8 pass (held).
// Unit side: tests/unit/test_redteam_138.c (msg.c), test_redteam_138_rules.c
// (publish_rules.c, the note queue).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { makeRoot, withApi, until, sleep } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const SELECTOR = `spec.driver=${DRIVER},spec.nodeName=${NODE}`;
const slicesOf = (emu) => emu.getSlices({ fieldSelector: SELECTOR });

async function setup(t, args, emuOpts = {}) {
  return withApi(t, makeRoot(DRIVER), args, {}, { versions: ['v1'], nodes: [NODE], ...emuOpts });
}

// stop() that does not wait forever: { hung: true } after ms.
async function stopWithin(drv, ms) {
  drv.lines = drv.lines.filter((l) => !l.startsWith('stopped'));
  drv.proc.stdin.write('stop\n');
  let l;
  try { l = await drv.line(['stopped'], ms); } catch { return { hung: true }; }
  const m = /^stopped (-?\d+) fds (\d+) (\d+)$/.exec(l);
  return { hung: false, code: Number(m[1]), fdsBefore: Number(m[2]), fdsAfter: Number(m[3]) };
}

// FINDING 1 (kp_stop hangs for good). The error function republishes the
// driver's resources (the pattern of docs/getting-started.md: "may call
// kp_publish_resources again (also while kp_stop() runs"). When that call itself leaves a pool out (here:
// ReconcilePoolWithName=pool-1 and the function publishes pool-0), each
// call queues one more note (publish_rules() runs BEFORE request() checks
// `stopping`), so notes_run() never empties the queue: the event thread
// calls the function forever, and kp_stop()'s events_stop() joins it
// forever. The function sees KP_EPIPE each time and returns, as documented.
test('REDTEAM: kp_stop ends while the error function republishes a pool the rules leave out', async (t) => {
  const { drv } = await setup(t, ['--channels', '--reconcile-pool', 'pool-1', '--error-republish', '1']);
  const l = await drv.command('publish 1 2', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await drv.line(['errcb-republish ']);
  await sleep(300);
  const cbs = drv.lines.filter((x) => x.startsWith('errcb-republish ')).length;
  const st = await stopWithin(drv, 20000);
  const after = drv.lines.filter((x) => x.startsWith('errcb-republish ')).length;
  assert.equal(st.hung, false, `kp_stop still running after 20 s; error function called ${after} times ` +
    `(${after - cbs} after "stop"), last: ${drv.lines.filter((x) => x.startsWith('errcb-republish ')).pop()}`);
  assert.equal(st.code, 0);
});

const rssKb = (pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

// FINDING 2 (the note queue has no bound). events_note() appends one
// calloc'd note (~290 bytes) per pool left out per call, and nothing
// bounds or coalesces the queue: a driver that publishes faster than its
// error function returns (here: a function that takes 2 s, as one that
// talks to the API server or waits on a lock might; the driver publishes
// the same resources in a loop) grows the driver's heap without limit,
// and every stale report is delivered later, long after the pool was
// corrected. Upstream's controller keys its queue by pool (a workqueue
// coalesces), so the same pool is reported at most once per sync.
test('REDTEAM: the error reports queued for the error function are bounded', async (t) => {
  const { drv } = await setup(t, ['--channels', '--error-republish', '2000']);
  let l = await drv.command('publish 1 2 a 0 1', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await drv.line(['errcb KP_EINVAL']);
  const pid = Number((await drv.line(['ready'])).split(' ')[1]);
  const before = rssKb(pid);
  const t0 = Date.now();
  drv.lines = drv.lines.filter((x) => !x.startsWith('publish '));
  drv.proc.stdin.write('publish-loop 30000 1 2 a 0 1\n');
  l = await drv.line(['publish '], 180000);
  const took = Date.now() - t0;
  assert.match(l, /^publish KP_OK n=30000/, l);
  const grew = rssKb(pid) - before;
  const seen = drv.lines.filter((x) => x.startsWith('errcb ')).length;
  console.log(`30000 publishes in ${took} ms; driver VmRSS +${grew} kB; error function called ${seen} times so far`);
  assert.ok(grew < 2048, `driver VmRSS grew ${grew} kB for 30000 reports of one pool (${seen} delivered)`);
});

// FINDING 3 (a pool left out loses its slices after a restart). The state
// a pool left out keeps is the plugin's in-memory last_pub: after kp_stop()
// + kp_start() (or a driver restart, a rolling update) there is none, the
// pool is dropped from the desired state, and the publisher DELETES the
// slices it finds for it. The header promises "its slices stay as they
// were last published", and upstream's controller returns from the pool's
// sync before any write (the check is on the desired pool, not on what
// this process sent before).
test('REDTEAM: a pool left out by ValidateQualifiedNames keeps its slices across kp_stop + kp_start', async (t) => {
  // No --channels: its status thread makes the restart's kp_start refuse;
  // without an error function the report is a warning in the log.
  const { emu, drv } = await setup(t, ['--start-twice']);
  const pool = (name) => slicesOf(emu).filter((s) => s.spec.pool.name === name);
  let l = await drv.command('publish 1 2 a', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await until(() => pool('pool-0').length === 1 && pool('pool-1').length === 1, 15000, 100);
  l = await drv.command('restart', 'restart ');
  assert.match(l, /^restart KP_OK/, l);
  l = await drv.command('publish 1 2 b 0 1', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await drv.stderrMatch(/pools\[1\] "pool-1": .*ValidateQualifiedNames/);
  await until(() => pool('pool-0').length === 1 && pool('pool-0')[0].spec.devices[0].attributes['example.com/tag'].string === 'b', 15000, 100);
  await sleep(1500);
  const dels = emu.writes({ method: 'DELETE', path: '/resourceslices' }).length;
  assert.equal(pool('pool-1').length, 1, `pool-1's slice is gone (${dels} DELETE); the log said: ` +
    /^.*pools\[1\] "pool-1".*$/m.exec(drv.stderr)[0]);
});

// kp_state_initial() (78364cc): what held is asserted here too.
const { TestDriver, childLines, roles } = require('./lib/plugin');
const path = require('node:path');

async function plain(t, args) {
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, args);
  t.after(async () => { drv.kill(); await drv.exited; root.cleanup(); });
  return { root, drv };
}
const initLines = (drv) => childLines(drv.stderr).filter((l) => l.startsWith('INITSTATE'));

for (const mode of ['exec', 'fork']) {
  test(`kp_state_initial at KP_STATE_MAX reaches the first nodeserver (${mode})`, async (t) => {
    const { drv } = await plain(t, ['--channels', '--initial-state-big', '262144', ...(mode === 'fork' ? ['--fork-hooks'] : [])]);
    await drv.ready();
    await until(() => initLines(drv).length === 1, 15000);
    assert.match(initLines(drv)[0], /^INITSTATE gen=1 len=262144 x+$/);
    assert.equal((await drv.stop()).code, 0);
  });
}

test('kp_state_initial: a start that fails still names its cause (publisher kubeconfig)', async (t) => {
  const { drv } = await plain(t, ['--channels', '--initial-state', 'boot', '--kubeconfig', '/nonexistent/kc', '--node-name', NODE]);
  const l = await drv.line(['ready', 'error'], 30000);
  assert.match(l, /^error KP_\S+ .*kubeconfig/, l);
});

test('kp_state_initial, exec\'d nodeserver: a later main() run with other bytes, then with none', async (t) => {
  const dir = fs.mkdtempSync('/tmp/kp-rt38-');
  fs.chmodSync(dir, 0o755);
  const f = path.join(dir, 'state');
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(f, 'first');
  fs.chmodSync(f, 0o644);
  const { drv } = await plain(t, ['--channels', '--initial-state-file', f]);
  await drv.ready();
  await until(() => initLines(drv).length === 1, 15000);
  assert.equal(initLines(drv)[0], 'INITSTATE gen=1 len=5 first');
  // Other bytes in the next run of main(): the supervisor's copy counts.
  fs.writeFileSync(f, 'other');
  let ns = roles(drv.proc.pid).nodeserver;
  process.kill(ns, 'SIGKILL');
  await until(() => initLines(drv).length === 2, 20000, 100);
  assert.equal(initLines(drv)[1], 'INITSTATE gen=1 len=5 first');
  // No initial state in the next run: the options differ, named.
  fs.rmSync(f);
  ns = roles(drv.proc.pid).nodeserver;
  process.kill(ns, 'SIGKILL');
  await drv.stderrMatch(/initial_state_set/, 20000);
  console.log(drv.stderr.split('\n').filter((l) => /initial_state_set/.test(l)).slice(0, 3).join('\n'));
  console.log(drv.lines.filter((l) => l.startsWith('errcb')).slice(0, 3).join('\n'));
});

test('kp_state_initial: the nodeserver\'s init hook failing after the state is in: kp_start names it', async (t) => {
  const { drv } = await plain(t, ['--channels', '--initial-state', 'boot', '--init-fail']);
  const l = await drv.line(['ready', 'error'], 30000);
  assert.match(l, /^error KP_\S+ .*test init failure/, l);
  assert.deepEqual(initLines(drv), ['INITSTATE gen=1 len=4 boot']);
});
