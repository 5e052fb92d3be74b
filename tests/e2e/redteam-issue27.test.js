'use strict';
// Red team of issues 27 and 28 (what landed after ad82a6f: claim look-up
// cancellation, hung-child healing, connection eviction, the batched log
// relay). The nodeserver is tests/e2e/bin/kp_attack.c, whose hooks write
// raw frames to the supervisor (hostile.test.js has the harness).
//
//   KP_BUILD=build node --test --test-concurrency=1 tests/e2e/redteam-issue27.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { KubeletSim } = require('../kubelet-sim');
const { BUILD, makeRoot, TestDriver, roles, until, sleep, attackProbes, withApi } = require('./lib/plugin');

const ATTACK = path.join(BUILD, 'tests', 'kp_attack');
const DRIVER = 'test.example.com';

// kp_attack with Kubernetes access (an emulator), kubelet registered;
// run(spec) runs spec in the unprepare hook.
async function setup(t, args = []) {
  const root = makeRoot(DRIVER);
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-rt27-'));
  fs.chmodSync(probes, 0o755);
  t.after(() => fs.rmSync(probes, { recursive: true, force: true }));
  const { drv, emu } = await withApi(t, root, ['--read-path', probes, ...args],
    { binary: ATTACK, env: { KP_ATTACK_DIR: probes } });
  t.after(() => assert.doesNotMatch(drv.stderr, /Sanitizer|runtime error:/));
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  return { root, drv, emu, sim, run: attackProbes(sim, DRIVER, probes) };
}

// The GETs of claims named prefix-N the emulator saw.
const claimGets = (emu, prefix) => emu.requests()
  .filter((q) => new RegExp(`/resourceclaims/${prefix}-\\d+$`).test(q.path));

test('red team: forged, duplicated, out-of-order and repeated claim_cancel ids from a hostile nodeserver: no sibling is killed, every supervisor slot comes back, withdrawn look-ups waiting for a token never reach the API server', async (t) => {
  // The publisher's client at 200 GETs a second, burst 40: the look-ups
  // are limited by the supervisor's slots and rate alone.
  const { drv, emu, run } = await setup(t, ['--kube-qps', '200:40']);
  const r0 = roles(drv.proc.pid);
  assert.ok(r0.publisher && r0.nodeserver, JSON.stringify(r0));
  // 64 look-ups (the supervisor's cap), then cancels: an id nobody
  // asked for, one id 64 times, all in reverse order, all again.
  assert.match(await run('raw-cancel:64:cx'), /raw-cancel: sent 64 of 64, 4 cancels/);
  // The ones at the publisher are answered (to nobody); those that
  // waited for a token (burst 40) were dropped at the supervisor.
  await sleep(1500);
  const cx = claimGets(emu, 'cx').length;
  assert.ok(cx <= 48, `${cx} GETs of 64 withdrawn look-ups, 24 of them waiting for a token`);
  // Every slot is free again: 64 new look-ups all reach the API server
  // (a slot a withdrawal leaked would answer one "too many claim
  // look-ups in flight" at once, without a GET).
  assert.match(await run('raw-claims:64:again'), /raw-claims: sent 64 of 64/);
  await until(() => claimGets(emu, 'again').length === 64, 15000).catch(() => {});
  assert.equal(claimGets(emu, 'again').length, 64, 'every look-up after the cancels got a GET');
  assert.doesNotMatch(drv.stderr, /protocol violation|too many claim look-ups/);
  // Nobody was killed or restarted for it.
  assert.deepEqual(roles(drv.proc.pid), r0);
  // 65 ids in one frame break the field rule: the nodeserver's own
  // violation; the publisher and the registrar stay.
  assert.match(await run('raw-cancel65:1:over'), /raw-cancel|Unavailable|No connection|closed|cancel/i);
  await drv.stderrMatch(/nodeserver: protocol violation: [^\n]*claim_cancel\.ids: 65 ids/);
  const r1 = roles(drv.proc.pid);
  assert.equal(r1.publisher, r0.publisher, 'the publisher is not restarted for a nodeserver\'s cancel');
  assert.equal(r1.registrar, r0.registrar);
});
