'use strict';
// The loop-device example (build/examples/loop-driver; docs/device-drivers.md):
// a driver of nodes directly in /dev. Its pod profile, printed from its own
// binary, is the policy tool's with main()'s one ioctl and lets main() make
// that call; run as root on this machine's loop devices with the emulator
// and the kubelet simulator, it publishes /dev/loop0../dev/loop<N-1> with
// their numbers (its main() confined by its own profile) and prepares a claim into a CDI spec that names the node,
// which the supervisor passed against the driver's block 7:* rule.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { BUILD, until } = require('./lib/plugin');
const { LOOP_DRIVER, DRIVER, NODE, loopSkip, startLoopDriver } = require('./lib/loop-driver');

const POLICY = path.join(BUILD, 'tools', 'kubeletplugin-policy');
const LOOP_CTL_ADD = 0x4C80;

const opts = { skip: loopSkip() };

test('--print-seccomp-profile, through the policy tool, is the tool\'s profile with main()\'s LOOP_CTL_ADD', () => {
  const own = spawnSync(LOOP_DRIVER, ['--print-seccomp-profile'], { encoding: 'utf8' });
  assert.equal(own.status, 0, own.stderr);
  const pod = spawnSync(POLICY, ['--from', '-'], { input: own.stdout, encoding: 'utf8' });
  assert.equal(pod.status, 0, pod.stderr);
  const tool = spawnSync(POLICY, ['-I', `0x${LOOP_CTL_ADD.toString(16)}`], { encoding: 'utf8' });
  assert.equal(tool.status, 0, tool.stderr);
  assert.deepEqual(JSON.parse(pod.stdout), JSON.parse(tool.stdout));
  const plain = JSON.parse(spawnSync(POLICY, [], { encoding: 'utf8' }).stdout);
  const ioctlValues = (p) => p.syscalls.filter((s) => s.names.includes('ioctl'))
    .flatMap((s) => (s.args || []).map((a) => a.valueTwo));  // MASKED_EQ: mask, value
  assert.ok(ioctlValues(JSON.parse(own.stdout)).includes(LOOP_CTL_ADD), 'LOOP_CTL_ADD allowed');
  assert.ok(!ioctlValues(plain).includes(LOOP_CTL_ADD), 'not in the default profile');
});

test('the loop driver publishes its loop devices and prepares a claim into a spec naming the node', opts, async (t) => {
  const { emu, kubelet, cdi, proc } = await startLoopDriver(t);
  // It confined itself (kp_policy_main_confine) before its LOOP_CTL_ADD,
  // which the declaration let through: every thread under its filter.
  for (const tid of fs.readdirSync(`/proc/${proc.pid}/task`)) {
    assert.match(fs.readFileSync(`/proc/${proc.pid}/task/${tid}/status`, 'utf8'), /^Seccomp:\s+2$/m, `thread ${tid}`);
  }
  const devs = await until(() => {
    const d = emu.getSlices({ fieldSelector: `spec.driver=${DRIVER}` }).flatMap((s) => s.spec.devices || []);
    return d.length === 2 ? d : null;
  }, 15000, 100);
  for (const [i, d] of devs.entries()) {
    const st = fs.statSync(`/dev/loop${i}`);
    assert.equal(d.name, `loop${i}`);
    assert.deepEqual(d.attributes.major, { int: Math.floor(st.rdev / 256) & 0xfff });
    assert.deepEqual(d.attributes.index, { int: i });
  }
  const c = { namespace: 'default', name: 'c1', uid: randomUUID() };
  emu.addClaim({ ...c, allocation: { results: [{ request: 'disk', driver: DRIVER, pool: NODE, device: 'loop1' }] } });
  const res = await kubelet.nodePrepareResources(DRIVER, [c]);
  const cr = res.claims[c.uid];
  assert.ok(!cr.error, cr.error);
  assert.deepEqual(cr.devices[0].cdiDeviceIds || cr.devices[0].cdi_device_ids, [`${DRIVER}/loop=loop1-${c.uid}`]);
  const spec = JSON.parse(fs.readFileSync(path.join(cdi, `${DRIVER}_claim-${c.uid}.json`), 'utf8'));
  assert.deepEqual(spec.devices[0].containerEdits.deviceNodes, [{ path: '/dev/loop1' }]);
  // A device the pool does not have fails that claim by name.
  const bad = { namespace: 'default', name: 'c2', uid: randomUUID() };
  emu.addClaim({ ...bad, allocation: { results: [{ request: 'disk', driver: DRIVER, pool: NODE, device: 'sda' }] } });
  const br = await kubelet.nodePrepareResources(DRIVER, [bad]).catch((e) => e);
  assert.match(String(br.message || br.claims?.[bad.uid]?.error), /sda is not a loop device of this node/);
  await kubelet.nodeUnprepareResources(DRIVER, [c]);
  assert.deepEqual(fs.readdirSync(cdi), [], 'the spec removed with the claim');
});
