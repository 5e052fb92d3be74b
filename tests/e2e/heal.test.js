'use strict';
// Hung children are healed (issue 28, finding 4): a child that stops
// answering the supervisor's heartbeat (SIGSTOP here) for
// kp_hung_child_timeout() is killed and restarted like a crashed one, the
// observer included; what it served works again afterwards (kubelet's
// calls, its re-registration, /healthz, the publisher's writes), and the
// log says so once: one warning when the answers stop, one when the child
// is killed, none in between. No time is asserted: the tests wait for
// the new pid and count lines.
//
//   KP_BUILD=build node --test --test-concurrency=1 tests/e2e/heal.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { makeRoot, TestDriver, roles, until, freePort, withApi } = require('./lib/plugin');

const DRIVER = 'test.example.com';
// 6 s: past the 5 s after which /healthz fails (its warning comes first),
// the shortest a test can wait for both lines.
const HUNG = ['--hung-ms', '6000', '--shutdown-grace-ms', '1000'];
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

async function get(port, p) {
  const r = await fetch(`http://127.0.0.1:${port}${p}`, { signal: AbortSignal.timeout(5000) });
  return { status: r.status, body: await r.text() };
}

// The plugin's warning and error lines (klog W/E) from offset on that
// name role.
function warnings(drv, from, role) {
  return drv.stderr.slice(from).split('\n')
    .filter((l) => /^[WE]\d{4} /.test(l) && l.includes(role));
}

// SIGSTOP role's process; resolves with its replacement's pid once that
// one is READY, after checking what was logged meanwhile.
async function stopAndHeal(drv, role) {
  const old = roles(drv.proc.pid)[role];
  assert.ok(old, `no ${role}`);
  const from = drv.stderr.length;
  process.kill(old, 'SIGSTOP');
  try {
    await drv.stderrMatch(new RegExp(`${role} ready, pid (?!${old}\\b)\\d+ \\(restarted\\)`), 40000);
  } finally {
    try { process.kill(old, 'SIGCONT'); } catch { /* gone */ }
  }
  const pid = Number(new RegExp(`${role} ready, pid (\\d+) \\(restarted\\)`).exec(drv.stderr.slice(from))[1]);
  assert.notEqual(pid, old);
  assert.equal(fs.existsSync(`/proc/${old}/status`) && !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${old}/status`, 'utf8')), false,
    `the stopped ${role} (pid ${old}) is gone`);
  const w = warnings(drv, from, role);
  const silent = new RegExp(`${role} has not answered the supervisor's heartbeat for \\d+ s$`);
  const killed = new RegExp(`${role} has not answered the supervisor's heartbeat for \\d+ s \\(kp_hung_child_timeout 6000 ms\\): (killing it|draining it \\(SIGTERM, then SIGKILL\\)) and starting a new one$`);
  assert.equal(w.length, 2, `one warning when it went silent, one when it was killed:\n${w.join('\n')}`);
  assert.match(w[0], silent);
  assert.match(w[1], killed);
  return pid;
}

test('a stopped nodeserver, registrar, observer: each is killed and replaced; calls, re-registration and /healthz work again; two warnings each', async (t) => {
  const root = makeRoot(DRIVER);
  const port = await freePort();
  const drv = new TestDriver(root, ['--http-endpoint', `127.0.0.1:${port}`, ...HUNG]);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, version: '1.34', retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  await until(async () => (await get(port, '/healthz').catch(() => ({}))).status === 200, 15000, 100);

  // The nodeserver: kubelet's calls work again on the replacement.
  await stopAndHeal(drv, 'nodeserver');
  const res = await sim.nodePrepareResources(DRIVER, [claim('after-heal')], { timeoutMs: 20000 });
  assert.equal(Object.keys(res.claims).length, 1);
  assert.equal(Object.values(res.claims)[0].error || '', '');

  // The registrar: a kubelet that (re)registers while it is stopped
  // fails, then registers with the replacement.
  const reg = roles(drv.proc.pid).registrar;
  const sim2 = new KubeletSim({ registryDir: root.registry, version: '1.34', retryInitialMs: 100 });
  t.after(() => sim2.stop());
  const healed = stopAndHeal(drv, 'registrar');
  await until(() => roles(drv.proc.pid).registrar === reg && fs.readFileSync(`/proc/${reg}/status`, 'utf8').match(/^State:\s+T/m), 5000, 10);
  sim2.start();
  await healed;
  await sim2.waitForDriver(DRIVER, 30000);

  // The observer: nothing else notices it; /healthz answers again.
  await stopAndHeal(drv, 'observer');
  await until(async () => (await get(port, '/healthz').catch(() => ({}))).status === 200, 15000, 100);
  const m = await get(port, '/metrics');
  for (const role of ['nodeserver', 'registrar', 'observer'])
    assert.match(m.body, new RegExp(`kubeletplugin_process_restarts_total\\{role="${role}",reason="hung"\\} 1\\n`));
  assert.doesNotMatch(drv.stderr, /Sanitizer|runtime error:/);
});

test('a stopped publisher is killed and replaced; it publishes again; two warnings', async (t) => {
  const { emu, drv } = await withApi(t, makeRoot(DRIVER), HUNG);
  await stopAndHeal(drv, 'publisher');
  assert.match(await drv.command('publish 3', 'publish '), /^publish KP_OK/);
  await until(() => emu.getSlices({}).some((s) => s.spec.devices.length === 3), 20000, 100);
});

test('kp_hung_child_timeout 0: a stopped nodeserver is reported, never killed', async (t) => {
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, ['--hung-ms', '0']);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  const ns = roles(drv.proc.pid).nodeserver;
  const from = drv.stderr.length;
  process.kill(ns, 'SIGSTOP');
  try {
    await drv.stderrMatch(/health: nodeserver has not answered the supervisor's heartbeat/, 15000);
    // Past the default timeout (10 s, counted from the silence): still
    // this one, and no second line.
    await new Promise((r) => setTimeout(r, 7000));
  } finally {
    process.kill(ns, 'SIGCONT');
  }
  assert.equal(roles(drv.proc.pid).nodeserver, ns, 'not replaced');
  assert.deepEqual(warnings(drv, from, 'nodeserver').length, 1, warnings(drv, from, 'nodeserver').join('\n'));
  await drv.stderrMatch(/health: ok again/, 15000);
});
