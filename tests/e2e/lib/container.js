'use strict';
// What the container tests (container.test.js, device-pod.test.js) share:
// podman, the limits it may set here, and the AppArmor profile of
// deploy/apparmor loaded where the kernel has AppArmor.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./plugin');

const podman = (args, opts = {}) => spawnSync('podman', args, { encoding: 'utf8', timeout: 120000, ...opts });

// podman's limits it cannot raise without CAP_SYS_RESOURCE (this machine's
// sandbox lacks it): the caller's own, which any process may keep.
function ulimits() {
  const lim = (what) => {
    const l = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find((x) => x.startsWith(what));
    return l.slice(what.length).trim().split(/\s+/).slice(0, 2).map((v) => (v === 'unlimited' ? Infinity : Number(v)));
  };
  const [ns, nh] = lim('Max open files');
  // podman asks the runtime to set nproc, and an unchanged value fails
  // here too (EPERM): a lower one, which needs no privilege.
  const [us, uh] = lim('Max processes').map((v) => Math.min(v, 4096));
  return ['--ulimit', `nofile=${ns}:${nh}`, '--ulimit', `nproc=${us}:${uh}`];
}

// deploy/apparmor/kubeletplugin loaded (apparmor_parser -r, as on a node)
// and podman's option for it: { opts }, or { skip: why } where the kernel
// has no AppArmor; throws when the kernel refuses the profile.
function loadAppArmor() {
  let on = '';
  try { on = fs.readFileSync('/sys/module/apparmor/parameters/enabled', 'utf8').trim(); } catch { /* none */ }
  if (on !== 'Y') {
    return { skip: 'this kernel has no AppArmor (/sys/module/apparmor absent or disabled): deploy/apparmor/kubeletplugin cannot be loaded here (apparmor.test.js compiles it and checks its mount rules)' };
  }
  const r = spawnSync('apparmor_parser', ['-r', '-W', path.join(ROOT, 'deploy', 'apparmor', 'kubeletplugin')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`apparmor_parser -r deploy/apparmor/kubeletplugin: ${r.stderr || r.error}`);
  return { opts: ['--security-opt', 'apparmor=kubeletplugin'] };
}

module.exports = { podman, ulimits, loadAppArmor };
