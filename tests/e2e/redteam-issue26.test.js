'use strict';
// Red team of issue 26 (what landed: device rules, main()'s declarations
// and the policy tool's -m/-I/--from, the deploy components). The CDI
// device-node attacks are tests/unit/test_redteam_issue26.c; the
// admission policy's driver binding is deploy.test.js ("red team: two
// drivers' admission policies ..."); the AppArmor profile's bind route
// around its /proc and /sys denies is apparmor.test.js ("red team: ...").
//
// Here: kubeletplugin-policy --from with hostile input. The file is what
// a driver printed (--print-seccomp-profile), and the admin installs the
// tool's output for the whole pod. FAILED on 2a946ab: a syscalls[].names
// entry that is not a string crashed the tool (SIGSEGV in allowed()), and
// a default that allows, a listener or filter flags passed through into
// a profile broader than any declaration.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { BUILD } = require('./lib/plugin');
const { DRIVER, NODE, loopSkip, startLoopDriver } = require('./lib/loop-driver');

const POLICY = path.join(BUILD, 'tools', 'kubeletplugin-policy');

function fromStdin(profile, args = []) {
  return spawnSync(POLICY, ['--from', '-', ...args], { input: JSON.stringify(profile), encoding: 'utf8' });
}

test('red team: kubeletplugin-policy --from refuses a profile broader than an export or malformed, and does not crash', () => {
  const good = JSON.parse(execFileSync(POLICY, ['--no-runtime']).toString());
  // The control: the library's own export goes through, both formats.
  for (const f of ['oci', 'spo']) {
    const r = fromStdin(good, ['-f', f]);
    assert.equal(r.status, 0, r.stderr);
  }
  const bad = [
    [{ ...good, syscalls: [{ names: [1], action: 'SCMP_ACT_ALLOW' }] }, /names entry is not a string/],
    [{ ...good, syscalls: [{ names: [null, 'read'], action: 'SCMP_ACT_ALLOW' }] }, /names entry is not a string/],
    [{ ...good, syscalls: [{ names: 'read', action: 'SCMP_ACT_ALLOW' }] }, /without an action string and a names array/],
    [{ ...good, syscalls: [7] }, /without an action string/],
    [{ ...good, defaultAction: 'SCMP_ACT_ALLOW' }, /defaultAction does not deny/],
    [{ ...good, defaultAction: 'SCMP_ACT_LOG' }, /defaultAction does not deny/],
    [{ ...good, defaultAction: 'SCMP_ACT_NOTIFY' }, /defaultAction does not deny/],
    [{ ...good, listenerPath: '/run/agent.sock' }, /a field kp_policy_export_oci\(\) does not print/],
    [{ ...good, flags: ['SECCOMP_FILTER_FLAG_SPEC_ALLOW'] }, /does not print/],
    [{ ...good, 'a": "b': 1 }, /does not print/],
  ];
  for (const [p, why] of bad) {
    for (const f of ['oci', 'spo']) {
      const r = fromStdin(p, ['-f', f]);
      assert.equal(r.signal, null, `crashed on ${JSON.stringify(p).slice(0, 200)}`);
      assert.equal(r.status, 1, `${f}: accepted ${JSON.stringify(p).slice(0, 200)}: ${r.stdout.slice(0, 200)}`);
      assert.match(r.stderr, why);
      assert.equal(r.stdout, '', 'nothing printed');
    }
  }
});

test('red team: main()\'s declarations reach the pod profile only; the tool\'s -m/-I are refused beside --from', () => {
  // -m/-I add to the pod profile; -s is the hooks' (and the pod's).
  const base = JSON.parse(execFileSync(POLICY, ['--no-runtime']).toString());
  const withMain = JSON.parse(execFileSync(POLICY, ['--no-runtime', '-m', 'kexec_load']).toString());
  const names = (p) => p.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args).flatMap((r) => r.names);
  assert.ok(!names(base).includes('kexec_load'));
  assert.ok(names(withMain).includes('kexec_load'));
  const r = spawnSync(POLICY, ['--from', '-', '-m', 'kexec_load'], { input: JSON.stringify(base), encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--from takes the driver's declarations from the file/);
});

// examples/loop-driver takes the device name from the claim's allocation
// (the API server's word). FAILED on 2a946ab: "loop01" aliased loop1 and
// "loop50", a loop device the driver does not publish (the host's own:
// a snap's, a disk image's), were prepared into specs naming
// /dev/loop1 and /dev/loop50, which the block 7:* rule lets through.
const loopOpts = { skip: loopSkip() };

test('red team: the loop driver prepares only the loop devices it publishes, by their published names', loopOpts, async (t) => {
  const { emu, kubelet, cdi } = await startLoopDriver(t);
  let n = 0;
  const claim = async (device) => {
    const c = { namespace: 'default', name: `c${n++}`, uid: randomUUID() };
    emu.addClaim({ ...c, allocation: { results: [{ request: 'disk', driver: DRIVER, pool: NODE, device }] } });
    const res = await kubelet.nodePrepareResources(DRIVER, [c]).catch((e) => e);
    return String(res.message || res.claims?.[c.uid]?.error || '');
  };
  assert.equal(await claim('loop1'), '', 'the control: a published device');
  for (const d of ['loop01', 'loop001', 'loop50', 'loop2', 'loop+1', 'loop 1', 'loop1\n']) {
    assert.match(await claim(d), /is not a loop device of this node/, `${JSON.stringify(d)} prepared`);
  }
  const specs = fs.readdirSync(cdi).map((f) => JSON.parse(fs.readFileSync(path.join(cdi, f), 'utf8')));
  assert.deepEqual(specs.flatMap((s) => s.devices.flatMap((d) => d.containerEdits.deviceNodes)),
    [{ path: '/dev/loop1' }], 'one spec, of the published device');
});
