'use strict';
// The pod's seccomp profile binds the driver's own main() (docs/security.md,
// "The pod's profile"), in a real container runtime: tests/e2e/bin/kp_loopdriver.c,
// a loop-device driver's main() as docs/driver-guide.md shows it, prints
// its profile from its own binary (kp_policy_export_oci() with
// kp_policy_main_ioctl(LOOP_CTL_GET_FREE)), kubeletplugin-policy --from -
// adds the runtime's own syscalls, and podman runs the same binary under
// that profile with /dev/loop-control, without no-new-privileges (as a
// pod with SYS_ADMIN runs): LOOP_CTL_GET_FREE returns a loop device.
// Printed without the declaration, the profile answers EPERM. The hooks'
// side (the nodeserver's and the monitor's filters still refuse it) is
// test_pod_profile.c's.
//
// The container's root is a directory (podman --rootfs) with the binary
// and the libraries ldd finds for it. Skips, with the reason, when not
// root, without podman or /dev/loop-control, or when no OCI runtime
// starts a container here (crun 1.8 refuses hybrid cgroup hierarchies;
// runc is tried next).

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { BUILD } = require('./lib/plugin');

const DRIVER = path.join(BUILD, 'tests', 'kp_loopdriver');
const POLICY = path.join(BUILD, 'tools', 'kubeletplugin-policy');

// The binary and its libraries at the paths the loader finds them.
function rootfs(dir) {
  const root = path.join(dir, 'rootfs');
  for (const d of ['dev', 'proc', 'sys', 'tmp', 'etc', 'run']) fs.mkdirSync(path.join(root, d), { recursive: true });
  fs.copyFileSync(DRIVER, path.join(root, 'kp_loopdriver'));
  fs.chmodSync(path.join(root, 'kp_loopdriver'), 0o755);
  const libs = execFileSync('ldd', [DRIVER], { encoding: 'utf8' }).split('\n')
    .map((l) => /=> (\/\S+)/.exec(l) || /^\s*(\/\S+)/.exec(l)).filter(Boolean).map((m) => m[1]);
  for (const lib of libs) {
    fs.mkdirSync(path.join(root, path.dirname(lib)), { recursive: true });
    fs.copyFileSync(fs.realpathSync(lib), path.join(root, lib));
  }
  return root;
}

// The driver's own profile, as a pod's Localhost file.
function profile(dir, name, args) {
  const printed = execFileSync(DRIVER, [...args, '--print-seccomp-profile']);
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, execFileSync(POLICY, ['--from', '-'], { input: printed }));
  return file;
}

// podman cannot raise limits without CAP_SYS_RESOURCE, and asks the
// runtime to set them: lower ones than the caller's, which need no
// privilege.
const run = (rt, root, file) => spawnSync('podman', ['--runtime', rt, 'run', '--rm', '--network', 'none',
  '--ulimit', 'nofile=256:256', '--ulimit', 'nproc=1024:1024', '--device', '/dev/loop-control',
  '--security-opt', `seccomp=${file}`, '--rootfs', root, '/kp_loopdriver'], { encoding: 'utf8', timeout: 120000 });

function probe() {
  if (process.getuid() !== 0) return { skip: 'needs root (rootful podman, /dev/loop-control)' };
  if (spawnSync('podman', ['--version']).error) return { skip: 'podman is not installed (tools/deps.sh installs it)' };
  if (!fs.existsSync('/dev/loop-control')) return { skip: 'no /dev/loop-control (the loop module)' };
  return {};
}
const P = probe();
if (P.skip) process.stderr.write(`pod-profile.test.js: skipped: ${P.skip}\n`);

test('a driver\'s main() runs LOOP_CTL_GET_FREE under the pod profile it printed itself (podman, no no-new-privileges); without kp_policy_main_ioctl() the profile answers EPERM', P.skip ? { skip: P.skip } : {}, (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-podprof-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const root = rootfs(dir);
  const declared = profile(dir, 'declared', []);
  const undeclared = profile(dir, 'undeclared', ['--undeclared']);
  // The declaration is the only difference: one ioctl command rule.
  const rules = (f) => JSON.parse(fs.readFileSync(f, 'utf8')).syscalls;
  const loopRule = { names: ['ioctl'], action: 'SCMP_ACT_ALLOW',
    args: [{ index: 1, value: 4294967295, valueTwo: 0x4C82, op: 'SCMP_CMP_MASKED_EQ' }] };
  const isLoop = (r) => JSON.stringify(r) === JSON.stringify(loopRule);
  assert.equal(rules(declared).filter(isLoop).length, 1);
  assert.deepEqual(rules(declared).filter((r) => !isLoop(r)), rules(undeclared));

  const tried = [];
  for (const rt of ['crun', 'runc']) {
    const ok = run(rt, root, declared);
    if (/OCI runtime error|not supported/.test(ok.stderr) && ok.status !== 0 && !ok.stdout) {
      tried.push(`${rt}: ${ok.stderr.trim().split('\n').pop()}`);
      continue;
    }
    assert.equal(ok.status, 0, `${rt}: ${ok.stdout}${ok.stderr}`);
    assert.match(ok.stdout, /^LOOP_CTL_GET_FREE: loop\d+\n$/);
    const denied = run(rt, root, undeclared);
    assert.equal(denied.status, 1, `${rt}: ${denied.stdout}${denied.stderr}`);
    assert.equal(denied.stdout, 'LOOP_CTL_GET_FREE: Operation not permitted\n');
    t.diagnostic(`${rt}: ${ok.stdout.trim()}; undeclared: ${denied.stdout.trim()}`);
    return;
  }
  t.skip(`no OCI runtime starts a container here: ${tried.join('; ')}`);
});
