'use strict';
// Channels between the driver process, the library and the hooks
// (issues 13 and 11 in part), through the whole plugin:
//  - kp_state_set() in main() -> supervisor -> nodeserver, where the
//    prepare hook reads it (kp_hook_state_get) and kp_state_callback sees
//    each one: order, the size limit, a SIGKILLed nodeserver's successor
//    starting from the latest state, and a hostile nodeserver that tries
//    to send state (or events) upward;
//  - the parsed opaque configuration (struct kp_config) of a claim the
//    API-server emulator serves;
//  - kp_error_callback() with recoverable=1 for a slice the emulator
//    refuses and for fields it drops (a feature gate off), the default
//    log line without a callback, a crash loop (not recoverable), stale
//    health reports, and kp_status_fd() on registration.
// The test driver (tests/e2e/bin/kp_testdriver.c, --channels) prints
// what its callbacks and hooks see.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { startEmulator, kubeconfig } = require('../apiserver-emu');
const { makeRoot, TestDriver, roles, until, childLines } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';

// A plugin (with an emulator when kube is set) and a kubelet sim.
async function setup(t, { kube = false, args = ['--channels'], emuOpts = {}, simOpts = {} } = {}) {
  const root = makeRoot(DRIVER);
  let emu = null;
  const extra = [...args];
  if (kube) {
    emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile: path.join(root.dir, 'token'), ...emuOpts });
    fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
    const kc = path.join(root.dir, 'kubeconfig');
    fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
    extra.push('--kubeconfig', kc, '--node-name', NODE);
  }
  const drv = new TestDriver(root, extra);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    if (emu) await emu.stop();
    root.cleanup();
  });
  await drv.ready();
  const kubelet = new KubeletSim({ registryDir: root.registry, ...simOpts }).start();
  t.after(() => kubelet.stop());
  await kubelet.waitForDriver(DRIVER);
  return { root, emu, drv, kubelet };
}

const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

async function state(drv, text) {
  return drv.command(`state ${text}`, 'state ');
}

// The hook's "HOOKSTATE <tag> ..." line for the claim state-<tag>.
async function hookState(drv, kubelet, tag) {
  const c = claim(`state-${tag}`);
  const res = await kubelet.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].error || '', '', JSON.stringify(res));
  return until(() => childLines(drv.stderr).find((l) => l.startsWith(`HOOKSTATE ${tag} `)));
}

test('state from main() reaches the hooks in order; the size limit is refused naming it; a restarted nodeserver starts from the latest', async (t) => {
  const { drv, kubelet } = await setup(t);
  // No publisher here: only kubelet's registration verdict can have made
  // the status fd readable.
  assert.equal(await drv.line(['statusfd']), 'statusfd reg=1');
  assert.equal(await hookState(drv, kubelet, 'none'), 'HOOKSTATE none KP_ENOENT');

  for (const s of ['one', 'two', 'three']) assert.match(await state(drv, s), /^state KP_OK/);
  await until(() => childLines(drv.stderr).filter((l) => l.startsWith('STATECB')).length === 3);
  assert.deepEqual(childLines(drv.stderr).filter((l) => l.startsWith('STATECB')),
    ['STATECB gen=1 len=3 one', 'STATECB gen=2 len=3 two', 'STATECB gen=3 len=5 three']);
  assert.equal(await hookState(drv, kubelet, 'a'), 'HOOKSTATE a gen=3 len=5 three');

  // One byte over the limit: refused in the driver process, nothing sent.
  const over = await drv.command('state-big 262145', 'state ');
  assert.match(over, /^state KP_EINVAL kp_state_set: len: 262145 bytes exceed KP_STATE_MAX \(262144 bytes\)/);
  // Exactly the limit passes, and is the next generation.
  assert.match(await drv.command('state-big 262144', 'state '), /^state KP_OK/);
  await until(() => childLines(drv.stderr).some((l) => l.startsWith('STATECB gen=4 len=262144 xxxx')));
  assert.match(await state(drv, 'latest'), /^state KP_OK/);
  await until(() => childLines(drv.stderr).some((l) => l === 'STATECB gen=5 len=6 latest'));

  // SIGKILL: the next nodeserver has the latest state in its init hook
  // (before it serves) and in its first prepare.
  const before = roles(drv.proc.pid).nodeserver;
  process.kill(before, 'SIGKILL');
  await until(() => { const n = roles(drv.proc.pid).nodeserver; return n && n !== before; });
  await until(() => childLines(drv.stderr).filter((l) => l.startsWith('INITSTATE')).length === 2);
  assert.deepEqual(childLines(drv.stderr).filter((l) => l.startsWith('INITSTATE')),
    ['INITSTATE KP_ENOENT', 'INITSTATE gen=5 len=6 latest']);
  let line;
  await until(async () => {
    // kubelet retries while the new nodeserver comes up.
    try { line = await hookState(drv, kubelet, 'b'); return true; } catch { return false; }
  }, 20000, 200);
  assert.equal(line, 'HOOKSTATE b gen=5 len=6 latest');
  // The successor announced nothing: the start state is not a change.
  assert.equal(childLines(drv.stderr).filter((l) => l.startsWith('STATECB')).length, 5);
  // And later states still flow.
  assert.match(await state(drv, 'after'), /^state KP_OK/);
  await until(() => childLines(drv.stderr).some((l) => l === 'STATECB gen=6 len=5 after'));
  const st = await drv.stop();
  assert.equal(st.code, 0);
  assert.equal(st.fdsAfter, st.fdsBefore, 'no fd left behind (event socket, status fd)');
});

test('kp_state_initial(): the first nodeserver starts with the state set before kp_start(); kp_state_set() goes on from generation 2', async (t) => {
  const { drv, kubelet } = await setup(t, { args: ['--channels', '--initial-state', 'devices-at-boot'] });
  // The init hook of the first nodeserver already has it.
  await until(() => childLines(drv.stderr).some((l) => l.startsWith('INITSTATE')));
  assert.deepEqual(childLines(drv.stderr).filter((l) => l.startsWith('INITSTATE')), ['INITSTATE gen=1 len=15 devices-at-boot']);
  assert.equal(await hookState(drv, kubelet, 'first'), 'HOOKSTATE first gen=1 len=15 devices-at-boot');
  // Not announced to the state function: it is the start state.
  assert.equal(childLines(drv.stderr).filter((l) => l.startsWith('STATECB')).length, 0);
  assert.match(await state(drv, 'later'), /^state KP_OK/);
  await until(() => childLines(drv.stderr).some((l) => l === 'STATECB gen=2 len=5 later'));
  assert.equal(await hookState(drv, kubelet, 'second'), 'HOOKSTATE second gen=2 len=5 later');
  assert.equal((await drv.stop()).code, 0);
});

for (const kind of ['state', 'event']) {
  test(`HOSTILE: a nodeserver that sends ${kind === 'state' ? 'state' : 'an event'} upward is killed; the state stays the driver's`, async (t) => {
    const { drv, kubelet } = await setup(t);
    assert.match(await state(drv, 'good'), /^state KP_OK/);
    await until(() => childLines(drv.stderr).some((l) => l === 'STATECB gen=1 len=4 good'));
    const before = roles(drv.proc.pid).nodeserver;
    const c = claim(`hostile-${kind}`);
    await kubelet.nodePrepareResources(DRIVER, [c], { timeoutMs: 10000 }).catch(() => null);
    await drv.stderrMatch(new RegExp(`nodeserver: protocol violation: unpermitted frame ${kind}(_set)? from the nodeserver`));
    // The driver heard of it, as a recoverable error.
    const err = await drv.line(['errcb KP_EPROTO']);
    assert.match(err, /^errcb KP_EPROTO rec=1 nodeserver: protocol violation: unpermitted frame/);
    await until(() => { const n = roles(drv.proc.pid).nodeserver; return n && n !== before; });
    let line;
    await until(async () => {
      try { line = await hookState(drv, kubelet, 'x'); return true; } catch { return false; }
    }, 20000, 200);
    assert.equal(line, 'HOOKSTATE x gen=1 len=4 good', 'the forged state reached no one');
    assert.ok(!/EVIL/.test(childLines(drv.stderr).filter((l) => /STATE/.test(l)).join('\n')));
  });
}

test('the parsed opaque configuration matches the claim the API server serves', async (t) => {
  const { emu, drv, kubelet } = await setup(t, { kube: true });
  const c = claim('cfg');
  emu.addClaim({
    ...c,
    allocation: {
      results: [{ request: 'gpu', driver: DRIVER, pool: NODE, device: 'dev-1' }],
      config: [
        { source: 'FromClass', opaque: { driver: DRIVER, parameters: { apiVersion: 'x/v1', kind: 'C', mode: 'slow' } } },
        { source: 'FromClaim', requests: ['gpu', 'gpu2'], opaque: { driver: 'other.example.com', parameters: { mode: 'other' } } },
        { source: 'FromClaim', requests: ['gpu'], opaque: { driver: DRIVER, parameters: { mode: 'fast', n: [1, 2] } } },
      ],
    },
  });
  const res = await kubelet.nodePrepareResources(DRIVER, [c]);
  assert.equal(res.claims[c.uid].devices.length, 1);
  const line = await until(() => childLines(drv.stderr).find((l) => l.startsWith('CONFIGS cfg ')));
  assert.equal(line, 'CONFIGS cfg n=2'
    + ` [FromClass||${DRIVER}|{"apiVersion":"x/v1","kind":"C","mode":"slow"}|mode=slow]`
    + ` [FromClaim|gpu|${DRIVER}|{"mode":"fast","n":[1,2]}|mode=fast]`);
  // config_json keeps working, with the documented shape.
  const raw = childLines(drv.stderr).find((l) => l.startsWith('ALLOC default/cfg '));
  const cfg = JSON.parse(/ config=(.*)$/.exec(raw)[1]);
  assert.deepEqual(cfg, [
    { source: 'FromClass', parameters: { apiVersion: 'x/v1', kind: 'C', mode: 'slow' } },
    { source: 'FromClaim', requests: ['gpu'], parameters: { mode: 'fast', n: [1, 2] } },
  ]);
  // A claim without config: none parsed.
  const bare = claim('bare');
  emu.addClaim({ ...bare, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-2' }] } });
  await kubelet.nodePrepareResources(DRIVER, [bare]);
  await until(() => childLines(drv.stderr).includes('CONFIGS bare n=0'));
});

test('errors reach kp_error_callback as recoverable: a refused slice, dropped fields; kp_status_fd is readable after registration', async (t) => {
  const { emu, drv } = await setup(t, { kube: true, emuOpts: { featureGates: { DRADeviceTaints: false } } });
  // kubelet registered the plugin during setup: the status fd told.
  assert.equal(await drv.line(['statusfd reg=1']), 'statusfd reg=1');

  emu.inject({ method: 'POST', path: '/apis/resource.k8s.io/v1/resourceslices', status: 422, times: 1 });
  assert.match(await drv.command('publish 2', 'publish '), /^publish KP_OK/);
  const refused = await drv.line(['errcb KP_EKUBE'], 20000);
  assert.match(refused, /^errcb KP_EKUBE rec=1 publisher: .*pool-0.*422|^errcb KP_EKUBE rec=1 publisher: .*pool-0.*[Ii]nvalid/);

  assert.match(await drv.command('publish-taint', 'publish '), /^publish KP_OK/);
  await until(() => drv.lines.some((l) => /^errcb KP_EKUBE rec=1 publisher: pool pool-t, slice .*: some fields were dropped by the apiserver.*DRADeviceTaints/.test(l)), 20000, 50);
  // No error was reported as fatal.
  assert.ok(!drv.lines.some((l) => /^errcb .* rec=0/.test(l)), drv.lines.join('\n'));
});

test('without an error callback, each error is logged once where it happens (upstream\'s default)', async (t) => {
  const { drv } = await setup(t, { kube: true, args: [], emuOpts: { featureGates: { DRADeviceTaints: false } } });
  assert.match(await drv.command('publish-taint', 'publish '), /^publish KP_OK/);
  await drv.stderrMatch(/W\d{4} [\d:.]+ +\d+ publisher\] resourceslices: pool pool-t, .*some fields were dropped.*DRADeviceTaints/, 20000);
  // The supervisor has the error too (its status), and the republish
  // changed nothing: one line from the publisher, none from the driver.
  await until(async () => /dropped/.test(await drv.command('publish-status', 'pstatus')));
  assert.match(await drv.command('publish-taint', 'publish '), /^publish KP_OK/);
  await until(async () => /dropped/.test(await drv.command('publish-status', 'pstatus')));
  assert.equal(drv.stderr.match(/publisher\] resourceslices: .*some fields were dropped/g).length, 1, 'once');
  assert.doesNotMatch(drv.stderr, / driver\] .*dropped/, 'not again in the driver process');
  assert.doesNotMatch(drv.stderr, /^W\d{4} [\d:.]+ +\d+ broker\] .*dropped/m, 'nor warned again by the broker, which relays it');
});

test('a crash-looping nodeserver reaches kp_error_callback as not recoverable', async (t) => {
  const { drv } = await setup(t);
  let prev = roles(drv.proc.pid).nodeserver;
  // Restarts back off 100 ms doubling to 3.2 s: the sixth is the storm.
  for (let i = 0; i < 8 && !drv.lines.some((l) => l.startsWith('errcb KP_ECHILD')); i++) {
    process.kill(prev, 'SIGKILL');
    prev = (await until(() => {
      const now = roles(drv.proc.pid);
      return now.nodeserver && now.nodeserver !== prev ? now : null;
    }, 15000)).nodeserver;
  }
  const l = await drv.line(['errcb KP_ECHILD']);
  assert.match(l, /^errcb KP_ECHILD rec=0 nodeserver is crash-looping \(\d+ restarts\): restarting it every 3200 ms$/);
});

test('stale health reports reach kp_error_callback as recoverable', async (t) => {
  // A 1.37 kubelet watches health; one device with a 1 s timeout, then
  // silence: the nodeserver's check (every 10 s) finds it stale.
  const { drv, kubelet } = await setup(t, { simOpts: { version: '1.37', retryInitialMs: 100 } });
  await until(() => { const d = kubelet.getDriver(DRIVER); return d && d.health; }, 10000);
  assert.match(await drv.command('health pool-a dev-0 1 1', 'health'), /^health KP_OK/);
  const l = await drv.line(['errcb KP_ETIMEDOUT'], 25000);
  assert.match(l, /^errcb KP_ETIMEDOUT rec=1 nodeserver: device health reports are stale: none for \d+ s, more than the smallest health check timeout \(1 s\)/);
});
