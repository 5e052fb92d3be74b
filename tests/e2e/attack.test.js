'use strict';
// Review-attack (branch review-attack): a fully compromised nodeserver
// attacking the supervisor and what the supervisor writes as root. The
// prepare hook of tests/e2e/bin/kp_attack.c runs the spec in
// $KP_ATTACK_DIR/<n> for claim "probe-<n>" and fails the claim with the
// outcome.
//
// Tests named "ATTACK:" assert what docs/security.md promises; each one
// that FAILS is an attack that works today (see the review report). The
// others check that a defence held.
//
//   KP_BUILD=build node --test --test-concurrency=1 --test-timeout=300000 tests/e2e/attack.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { BUILD, makeRoot, TestDriver, roles, until, sleep, procStatus, IDS } = require('./lib/plugin');

const ATTACK = path.join(BUILD, 'tests', 'kp_attack');
const DRIVER = 'test.example.com';
const ROOT_USER = process.getuid() === 0;
const claim = (name) => ({ namespace: 'default', name, uid: randomUUID() });

async function setup(t, { args = [], stateDirs = null, root = null, prep = null } = {}) {
  root = root || makeRoot(DRIVER);
  const cdi = path.join(root.dir, 'cdi');
  const probes = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-attack-'));
  fs.chmodSync(probes, 0o755);
  if (prep) prep(root, probes);
  const dirs = stateDirs || [path.join(root.dir, 'state')];
  const drv = new TestDriver(root, [...dirs.flatMap((d) => ['--state-dir', d]), '--cdi-dir', cdi,
    '--read-path', probes, ...(ROOT_USER ? [] : ['--allow-uid', String(process.getuid())]), ...args],
  { binary: ATTACK, env: { KP_ATTACK_DIR: probes } });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    drv.kill();
    await drv.exited;
  };
  t.after(async () => {
    await stop();
    fs.rmSync(probes, { recursive: true, force: true });
  });
  await drv.ready();
  const sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver(DRIVER);
  let n = 0;
  const run = async (spec, timeoutMs = 30000) => {
    n++;
    fs.writeFileSync(path.join(probes, String(n)), `${spec}\n`);
    return sim.nodePrepareResources(DRIVER, [claim(`probe-${n}`)], { timeoutMs }).then(
      () => 'prepared (no probe outcome)', (e) => e.message);
  };
  return { root, drv, sim, cdi, probes, run, stop };
}

const supervisorPid = (drv) => roles(drv.proc.pid).supervisor;
const kib = (pid, field) => Number(((procStatus(pid) || {})[field] || '0 kB').split(' ')[0]);

// Finding 1. The broker checks the file name and that the content is
// UTF-8, and nothing else. The content is a CDI spec the container runtime
// (containerd, CRI-O: as root on the host) applies: its "kind" picks the
// vendor/class of the devices it defines (any vendor's), and its
// containerEdits may mount any host path, add any device node, and run
// OCI hooks (createRuntime, ...) as root in the host's namespaces.
test('ATTACK: the CDI broker refuses a spec that names another vendor\'s kind, mounts / and runs a host hook', async (t) => {
  const spec = JSON.stringify({
    cdiVersion: '0.6.0',
    kind: 'nvidia.com/gpu',	// not test.example.com/...: another vendor's devices
    devices: [{
      name: 'all',
      containerEdits: {
        mounts: [{ hostPath: '/', containerPath: '/host', options: ['rbind', 'rw'] }],
        deviceNodes: [{ path: '/dev/mem' }, { path: '/dev/sda' }],
        hooks: [{ hookName: 'createRuntime', path: '/bin/sh', args: ['sh', '-c', 'id > /tmp/kp-pwned'] }],
        env: ['LD_PRELOAD=/host/tmp/evil.so'],
      },
    }],
  });
  const { cdi, probes, run } = await setup(t, { prep: (r, p) => fs.writeFileSync(path.join(p, 'evil.json'), spec) });
  const name = `${DRIVER}_evil.json`;
  const out = await run(`cdi-file:${name}:${path.join(probes, 'evil.json')}`);
  t.diagnostic(`hook: ${out}`);
  const landed = fs.existsSync(path.join(cdi, name));
  if (landed) {
    const st = fs.statSync(path.join(cdi, name));
    t.diagnostic(`ATTACK WORKS: ${path.join(cdi, name)} written by the supervisor, uid ${st.uid} mode ${(st.mode & 0o777).toString(8)}, `
      + `kind nvidia.com/gpu, a host / mount, /dev/mem and a createRuntime hook`);
  }
  assert.ok(!landed, 'the supervisor wrote a root-owned CDI spec with a foreign kind, a host / mount and a host hook');
  assert.doesNotMatch(out, /: ok/);
});

// Finding 2. Rate limit, but no quota: every spec is up to 256 KiB, root
// writes it (no user quota, root's reserved blocks), /var/run/cdi is a
// tmpfs (node RAM), and the runtimes parse every spec in the directory.
test('ATTACK: the CDI broker bounds the number and total size of a driver\'s specs', async (t) => {
  const { cdi, run } = await setup(t);
  const t0 = Date.now();
  const out = await run('cdi-flood:240:262144', 60000);
  const files = fs.readdirSync(cdi).filter((f) => f.startsWith(`${DRIVER}_flood-`));
  const bytes = files.reduce((s, f) => s + fs.statSync(path.join(cdi, f)).size, 0);
  t.diagnostic(`hook: ${out}; ${files.length} specs, ${(bytes / 1048576).toFixed(1)} MiB in ${Date.now() - t0} ms`);
  assert.ok(files.length <= 128 && bytes <= 32 * 1048576,
    `no quota: ${files.length} specs, ${(bytes / 1048576).toFixed(1)} MiB of root-owned files written for one nodeserver`);
});

// One request at a time (as the wrapper sends them), as fast as the
// answers come: the broker writes at most 50 specs a second after a burst
// of 100, and a request over budget waits for its token (the supervisor's
// poll loop sleeps until then) instead of failing.
test('ATTACK: the CDI broker writes at most 50 specs a second after a burst of 100; requests over it wait, not fail', async (t) => {
  const { cdi, run } = await setup(t);
  const N = 200;
  const out = await run(`cdi-rate:${N}`, 60000);
  const m = /cdi-rate: ok (\d+) busy (\d+) in ([\d.]+) ms$/.exec(out);
  assert.ok(m, out);
  const [ok, busy, ms] = [Number(m[1]), Number(m[2]), Number(m[3])];
  t.diagnostic(`${ok} written, ${busy} KP_EBUSY in ${ms} ms`);
  assert.equal(busy, 0, out);
  assert.equal(ok, N, out);
  // The bucket was full (100) at most when the hook began.
  assert.ok(ok <= 100 + 50 * ms / 1000 + 1, `${ok} specs written in ${ms} ms`);
  assert.equal(fs.readdirSync(cdi).filter((f) => f.startsWith(`${DRIVER}_rate-`)).length, ok);
});

// Raw CdiWrite frames back to back (64 KiB specs, 26 MiB offered), not
// waiting for answers: the writes keep to the budget, what waits is
// bounded (64 requests, 4 MiB of frames; the rest KP_EBUSY at once), and
// the supervisor's memory does not grow with the flood.
test('ATTACK: a raw CdiWrite flood is bounded in writes a second and in the memory of the requests waiting', async (t) => {
  const { drv, cdi, run } = await setup(t);
  const sup = supervisorPid(drv);
  const hwm0 = kib(sup, 'VmHWM');
  const nsBefore = roles(drv.proc.pid).nodeserver;
  const N = 400;
  const written = () => fs.readdirSync(cdi).filter((f) => f.startsWith(`${DRIVER}_raw-`)).length;
  const out = await run(`cdi-raw:${N}:65536`, 60000);
  const m = /cdi-raw: sent (\d+) of (\d+) at ([\d.]+)/.exec(out);
  assert.ok(m, out);
  assert.equal(m[1], m[2], out);
  const t0 = Number(m[3]);
  const monoMs = () => Number(process.hrtime.bigint()) / 1e6;
  let last = -1;
  for (let stable = 0; stable < 5;) {
    const n = written();
    const dt = monoMs() - t0;
    assert.ok(n <= 100 + 50 * dt / 1000 + 1, `${n} specs written ${dt.toFixed(0)} ms after the flood began`);
    stable = n === last ? stable + 1 : 0;
    last = n;
    if (dt > 15000) break;
    await sleep(200);
  }
  const hwm1 = kib(sup, 'VmHWM');
  t.diagnostic(`${last} of ${N} written; supervisor VmHWM ${hwm0} kB -> ${hwm1} kB`);
  assert.ok(last >= 100, `${last}: the burst is written`);
  assert.ok(last <= 100 + 64 + 50 * 2, `${last} of ${N}: the requests waiting are not bounded`);
  // (ASan's quarantine keeps every freed frame: peak memory says nothing.)
  if (!/asan/.test(process.env.KP_BUILD || '')) {
    assert.ok(hwm1 - hwm0 < 16 * 1024, `the flood grew the supervisor's peak memory by ${((hwm1 - hwm0) / 1024).toFixed(1)} MiB`);
  }
  assert.equal(roles(drv.proc.pid).nodeserver, nsBefore, 'no violation: requests, not a protocol break');
  assert.deepEqual(fs.readdirSync(cdi).filter((f) => f.startsWith('.')), [], 'no temporary file left');
});

// Finding 3. The size cap is on the wire (1 MiB from a child); protobuf-c
// then allocates a struct per embedded message: an empty Device is 2 bytes
// on the wire and ~200 in memory. The role and case checks come after the
// unpack, so even a case the nodeserver may never send is unpacked whole.
test('ATTACK: one frame from the nodeserver does not make the supervisor allocate 100 times its size', async (t) => {
  const { drv, run } = await setup(t);
  const sup = supervisorPid(drv);
  const nsBefore = roles(drv.proc.pid).nodeserver;
  const hwm0 = kib(sup, 'VmHWM');
  const out = await run('raw-amp:524000', 20000);
  await until(() => roles(drv.proc.pid).nodeserver && roles(drv.proc.pid).nodeserver !== nsBefore, 15000).catch(() => {});
  const hwm1 = kib(sup, 'VmHWM');
  t.diagnostic(`hook: ${out}; supervisor VmHWM ${hwm0} kB -> ${hwm1} kB (+${((hwm1 - hwm0) / 1024).toFixed(1)} MiB)`);
  await until(() => /protocol violation/.test(drv.stderr), 10000).catch(() => {});
  t.diagnostic((drv.stderr.split('\n').find((l) => /protocol violation/.test(l)) || 'no violation logged').slice(0, 300));
  assert.ok(hwm1 - hwm0 < 16 * 1024, `a 1 MiB frame grew the supervisor's peak memory by ${((hwm1 - hwm0) / 1024).toFixed(1)} MiB`);
});

// Finding 4. Log lines from a child are rate-limited (200/s, bursts of
// 1000) on the log channel and stderr, but a HealthStale frame is logged
// by the supervisor itself at V(2), outside the limit, 1 KiB of text each.
test('ATTACK: HealthStale frames cannot flood the supervisor\'s log past the child log rate limit', async (t) => {
  const { drv, run } = await setup(t);
  const before = roles(drv.proc.pid).nodeserver;
  const out = await run('raw-stale:20000:1000', 60000);
  await sleep(2000);
  const lines = drv.stderr.split('\n').filter((l) => l.includes('FORGED-STALE'));
  t.diagnostic(`hook: ${out}; ${lines.length} supervisor log lines of ~1 KiB; nodeserver ${roles(drv.proc.pid).nodeserver === before ? 'same pid' : 'restarted'}`);
  assert.ok(lines.length <= 1200, `${lines.length} lines logged from one nodeserver in one burst, above the 1000-line burst limit`);
});

// Finding 5. State directories may nest. The supervisor (root) opens only
// the last component O_NOFOLLOW; an intermediate component inside an
// outer state directory is the nodeserver's to replace. With symlink(2)
// added by the driver (kp_sandbox_syscall; Landlock grants MAKE_SYM
// beneath state directories), the next start mkdirs/chowns a directory of
// the attacker's choice: here an existing root-owned "lib" elsewhere.
test('ATTACK: nested state directories: the nodeserver cannot make the supervisor chown a foreign directory', { skip: !ROOT_USER && 'needs root (chown)' }, async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const outer = path.join(root.dir, 'state');
  const inner = path.join(outer, 'claims', 'lib');
  const victim = path.join(root.dir, 'victim');
  fs.mkdirSync(path.join(victim, 'lib'), { recursive: true, mode: 0o755 });
  fs.chmodSync(path.join(victim, 'lib'), 0o755);
  fs.mkdirSync(path.join(outer, 'claims'), { recursive: true, mode: 0o755 });
  const start = async (dirs) => {
    const drv = new TestDriver(root, [...dirs.flatMap((d) => ['--state-dir', d]), '--cdi-dir', path.join(root.dir, 'cdi')], { binary: ATTACK });
    t.after(async () => { drv.kill(); await drv.exited; });
    return drv.line(['ready', 'error']);
  };
  // 1. Nested state directories are refused at kp_start (the nodeserver
  //    would control the inner one's path).
  assert.match(await start([outer, inner]), /^error KP_EINVAL .*must not nest/);
  // 2. The nodeserver plants a symlink where a state directory's parent
  //    should be (as it could in a directory it owns): the supervisor
  //    refuses to follow it at the next start, and chowns nothing.
  fs.chownSync(outer, IDS.nodeserver, IDS.nodeserver);
  fs.renameSync(path.join(outer, 'claims'), path.join(outer, 'old'));
  fs.symlinkSync(victim, path.join(outer, 'claims'));
  assert.match(await start([inner]), /^error KP_EACCES .*(symbolic link|must be root's)/);
  // 3. A parent owned by the nodeserver is refused even without a link.
  fs.unlinkSync(path.join(outer, 'claims'));
  fs.mkdirSync(path.join(outer, 'claims'), { mode: 0o755 });
  assert.match(await start([path.join(outer, 'claims', 'x')]), /^error KP_EACCES .*must be root's/);
  const st = fs.statSync(path.join(victim, 'lib'));
  t.diagnostic(`${path.join(victim, 'lib')} (never a state directory) is owned by ${st.uid}:${st.gid}`);
  assert.equal(st.uid, 0, 'the supervisor chowned a directory outside every state directory to the nodeserver');
});

// Held: names. The name rule is enforced in the supervisor, not only in
// the wrapper: a raw frame is answered with an error (files.test.js has
// ../escaped.json); a name that is a dot-file or another driver's prefix
// the same.
test('held: CDI names outside the driver\'s prefix are refused by the supervisor', async (t) => {
  const { cdi, probes, run } = await setup(t, { prep: (r, p) => fs.writeFileSync(path.join(p, 'x'), '{}') });
  for (const name of [`other.example.com_x.json`, `${DRIVER}.evil_x.json`, `.${DRIVER}_x.json`, `${DRIVER}_.x.json`,
    `${DRIVER}_x.json.d`, `${DRIVER}_x.JSON`]) {
    const out = await run(`cdi-file:${name}:${path.join(probes, 'x')}`);
    assert.match(out, /KP_EINVAL/, name);
  }
  assert.deepEqual(fs.readdirSync(cdi).filter((f) => !f.startsWith('.')), []);
});

// Held: the stderr relay. Every piece of a child's stderr, whatever its
// bytes (newline, CR, ANSI escapes, U+2028, NEL, a line cut at the relay's
// 511-byte buffer), is logged under the child's own prefix: no forged
// supervisor line.
test('held: a hook cannot forge a supervisor log line through its stderr', async (t) => {
  const { drv, run } = await setup(t);
  await run('stderr');
  await until(() => /FORGED-6/.test(drv.stderr), 5000).catch(() => {});
  const forged = drv.stderr.split('\n').filter((l) => /FORGED/.test(l));
  t.diagnostic(forged.map((l) => l.slice(0, 160)).join('\n'));
  assert.ok(forged.length >= 2, 'the lines reached the log');
  for (const l of forged) assert.match(l, /^[EWI]\d{4} [\d:.]+ +\d+ nodeserver\] stderr: /, l);
  assert.ok(!/\x1b|\r/.test(forged.join('')), 'no control bytes');
});

// Review 2, finding A. kp_cdi_allow_hook() declares only the hook's path;
// hooks[].env passes whatever NAME=value the spec chooses. The runtime
// execs the hook as root on the host with exactly that environment
// (runc: exec.Cmd{Env: hook.Env}), and the dynamic loader and shells act
// on it before the program's first line can "treat it as untrusted"
// (include/kubeletplugin.h): LD_PRELOAD of a library the nodeserver
// wrote into its own state directory, or BASH_ENV, which bash expands
// (command substitution included) for any non-interactive script.
test('ATTACK: a spec cannot hand a declared hook an environment that runs the nodeserver\'s code as root', async (t) => {
  const hookDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-hook-'));
  t.after(() => fs.rmSync(hookDir, { recursive: true, force: true }));
  fs.chmodSync(hookDir, 0o755);
  const hook = path.join(hookDir, 'vendor-hook');	// a harmless declared hook
  fs.writeFileSync(hook, '#!/bin/bash\nexit 0\n', { mode: 0o755 });
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const state = path.join(root.dir, 'state');
  const pwned = path.join(hookDir, 'pwned');
  const spec = JSON.stringify({
    cdiVersion: '0.6.0',
    kind: `${DRIVER}/test`,
    devices: [{ name: 'd', containerEdits: { env: ['X=1'] } }],
    containerEdits: {
      hooks: [{
        hookName: 'createRuntime', path: hook, args: ['vendor-hook'],
        env: [`LD_PRELOAD=${state}/evil.so`, `BASH_ENV=$(id -u > ${pwned})`],
      }],
    },
  });
  const { cdi, probes, run } = await setup(t, { root, args: ['--cdi-hook', hook],
    prep: (r, p) => fs.writeFileSync(path.join(p, 'hook.json'), spec) });
  const name = `${DRIVER}_hook.json`;
  const out = await run(`cdi-file:${name}:${path.join(probes, 'hook.json')}`);
  t.diagnostic(`hook: ${out}`);
  const file = path.join(cdi, name);
  if (fs.existsSync(file)) {
    // What the runtime does with it: exec the hook with the spec's env.
    const h = JSON.parse(fs.readFileSync(file, 'utf8')).containerEdits.hooks[0];
    const env = Object.fromEntries(h.env.filter((e) => !e.startsWith('LD_PRELOAD=')).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    require('node:child_process').spawnSync(h.path, h.args.slice(1), { env, argv0: h.args[0] });
    t.diagnostic(`ATTACK WORKS: ${file} landed with hooks[0].env ${JSON.stringify(h.env)}; `
      + `running the hook as the runtime would wrote ${pwned}: ${fs.existsSync(pwned) ? `uid ${fs.readFileSync(pwned, 'utf8').trim()}` : 'no'}`);
  }
  assert.ok(!fs.existsSync(file), 'a spec giving a declared hook LD_PRELOAD/BASH_ENV was written');
});

// Review 2, finding B. Nothing keeps a device or mount prefix out of the
// nodeserver's state directories (pol_opts_check() checks the CDI dir,
// sockets and kubeconfig only). The checker compares strings; the runtime
// follows symlinks on the host: a device node's hostPath is stat()ed (type
// and major:minor taken from the target, then allowed in the device
// cgroup), a bind mount's source is resolved by mount(2). With symlink(2)
// allowed (kp_sandbox_syscall), a link in the state directory hands the
// container /dev/mem or the host's /.
test('ATTACK: a device or mount prefix that is (or holds) a state directory is refused at kp_start', { skip: !ROOT_USER && 'needs root' }, async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const state = path.join(root.dir, 'state');
  const spec = JSON.stringify({
    cdiVersion: '0.6.0',
    kind: `${DRIVER}/test`,
    devices: [{
      name: 'd',
      containerEdits: {
        deviceNodes: [{ path: `${state}/mem` }],
        mounts: [{ hostPath: `${state}/root`, containerPath: '/host', type: 'bind', options: ['rbind', 'rw', 'rshared', 'suid', 'dev'] }],
      },
    }],
  });
  let drv;
  try {
    const s = await setup(t, { root, args: ['--cdi-device-prefix', state, '--cdi-mount-prefix', state,
      '--sandbox-syscall', 'symlink', '--sandbox-syscall', 'symlinkat'],
    prep: (r, p) => fs.writeFileSync(path.join(p, 'link.json'), spec) });
    drv = s;
  } catch (e) {
    t.diagnostic(`kp_start refused: ${e.message}`);
    return;
  }
  const { cdi, probes, run } = drv;
  const HOSTDEV = fs.existsSync('/dev/mem') ? '/dev/mem' : '/dev/kmsg';	// containers lack /dev/mem
  t.diagnostic(await run(`symlink:${HOSTDEV}:${state}/mem`));
  t.diagnostic(await run(`symlink:/:${state}/root`));
  const name = `${DRIVER}_link.json`;
  const out = await run(`cdi-file:${name}:${path.join(probes, 'link.json')}`);
  t.diagnostic(`hook: ${out}`);
  const file = path.join(cdi, name);
  if (fs.existsSync(file)) {
    const st = fs.statSync(`${state}/mem`);	// what the runtime's stat() sees
    t.diagnostic(`ATTACK WORKS: ${file} landed; deviceNodes[0] ${state}/mem resolves to a char device `
      + `${Math.floor(st.rdev / 256)}:${st.rdev % 256} (${HOSTDEV}); mounts[0] ${state}/root resolves to `
      + `${fs.realpathSync(`${state}/root`)} (rbind, rshared, suid, dev)`);
  }
  assert.ok(!fs.existsSync(file), 'a spec whose device node and mount are nodeserver-planted symlinks to a host device node and / was written');
});

// Review 2, finding C. Mount options are free strings: a bind of a
// declared prefix may say "rshared" (mounts made in the container
// propagate to the host's tree), "suid", "dev", "exec", or any string
// the runtime passes to mount(2) as data.
test('ATTACK: mount options are limited to harmless ones', async (t) => {
  const pfx = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-mnt-'));
  t.after(() => fs.rmSync(pfx, { recursive: true, force: true }));
  const spec = JSON.stringify({
    cdiVersion: '0.6.0',
    kind: `${DRIVER}/test`,
    devices: [{
      name: 'd',
      containerEdits: { mounts: [{ hostPath: pfx, containerPath: '/data', type: 'bind', options: ['rbind', 'rw', 'rshared', 'suid', 'dev', 'exec'] }] },
    }],
  });
  const { cdi, probes, run } = await setup(t, { args: ['--cdi-mount-prefix', pfx],
    prep: (r, p) => fs.writeFileSync(path.join(p, 'opt.json'), spec) });
  const name = `${DRIVER}_opt.json`;
  const out = await run(`cdi-file:${name}:${path.join(probes, 'opt.json')}`);
  t.diagnostic(`hook: ${out}`);
  assert.ok(!fs.existsSync(path.join(cdi, name)), 'a bind mount with rshared/suid/dev was accepted');
});

// Issue 26: device rules that name devices. A loop-device driver declares
// kp_cdi_allow_device_number("<dev>/loop[0-9]*", 'b', 7, 0, max) instead
// of the whole directory; the hostile nodeserver then asks for host
// devices outside the pattern, and for nodes at names the pattern matches
// that are not loop devices: a symbolic link to a host device, a node
// named loop8 with sda's number 8:0, a missing name with /dev/mem's
// numbers set in the spec, a good path with a foreign hostPath. Each is
// refused by the broker (supervisor/cdi_node.c); a real loop node passes.
// Then the numbers through the builder (kp_cdi_device_node type, major,
// minor; kp_attack cdi-node): agreeing ones written as set, others
// refused by the broker or, out of range, by the builder.
// The "host's /dev" is a directory of ours (the runtime would look in
// /dev; the broker looks where the spec says).
test('ATTACK: under a loop-device pattern the nodeserver gets no /dev/sda, /dev/mem, symlink or renamed node', { skip: !ROOT_USER && 'needs root (mknod)' }, async (t) => {
  const { execFileSync } = require('node:child_process');
  const dev = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-dev-'));
  t.after(() => fs.rmSync(dev, { recursive: true, force: true }));
  fs.chmodSync(dev, 0o755);
  execFileSync('mknod', [path.join(dev, 'loop7'), 'b', '7', '7']);
  execFileSync('mknod', [path.join(dev, 'loop8'), 'b', '8', '0']);	// sda's number
  const HOSTDEV = fs.existsSync('/dev/mem') ? '/dev/mem' : '/dev/kmsg';	// containers lack /dev/mem
  fs.symlinkSync(HOSTDEV, path.join(dev, 'loop9'));
  const { cdi, probes, run } = await setup(t, { args: ['--cdi-device-number', `b:7:0:1048575:${dev}/loop[0-9]*`] });
  const spec = (nodes) => JSON.stringify({ cdiVersion: '0.6.0', kind: `${DRIVER}/loop`,
    devices: [{ name: 'd', containerEdits: { deviceNodes: nodes } }] });
  const attempts = [
    ['sda', [{ path: '/dev/sda' }], /not a declared device/],
    ['mem', [{ path: '/dev/mem' }], /not a declared device/],
    ['mem-host', [{ path: `${dev}/loop7`, hostPath: HOSTDEV }], /hostPath "[^"]+": not a declared device/],
    ['link', [{ path: `${dev}/loop9` }], /a symbolic link \(the runtime would follow it/],
    ['renamed', [{ path: `${dev}/loop8` }], /the host's node b 8:0 is not a declared number/],
    ['renamed-host', [{ path: `${dev}/loop7`, hostPath: `${dev}/loop8` }], /hostPath "[^"]+": the host's node b 8:0/],
    ['numbers', [{ path: `${dev}/loop50`, type: 'c', major: 1, minor: 1 }], /type, major and minor of a node the host does not have/],
    ['disagree', [{ path: `${dev}/loop7`, type: 'b', major: 8, minor: 0 }], /do not agree with the host's node/],
  ];
  for (const [name, nodes, why] of attempts) {
    fs.writeFileSync(path.join(probes, `${name}.json`), spec(nodes));
    const file = `${DRIVER}_${name}.json`;
    const out = await run(`cdi-file:${file}:${path.join(probes, `${name}.json`)}`);
    t.diagnostic(`${name}: ${out}`);
    assert.ok(!fs.existsSync(path.join(cdi, file)), `${name}: ${JSON.stringify(nodes)} was written`);
    assert.match(out, /KP_EINVAL/, name);
    assert.match(out, why, name);
  }
  // The same driver's real loop node, with and without its numbers.
  fs.writeFileSync(path.join(probes, 'good.json'), spec([{ path: `${dev}/loop7` },
    { path: `${dev}/loop7`, type: 'b', major: 7, minor: 7 }]));
  const out = await run(`cdi-file:${DRIVER}_good.json:${path.join(probes, 'good.json')}`);
  assert.match(out, /: ok/, out);
  assert.ok(fs.existsSync(path.join(cdi, `${DRIVER}_good.json`)));
  // A major without a minor: the runtime makes minor 0 (loop0 from a
  // spec naming loop7), so the broker compares 0.
  fs.writeFileSync(path.join(probes, 'nominor.json'), spec([{ path: `${dev}/loop7`, type: 'b', major: 7 }]));
  assert.match(await run(`cdi-file:${DRIVER}_nominor.json:${path.join(probes, 'nominor.json')}`),
    /KP_EINVAL.*do not agree with the host's node/);
  // The same numbers through the builder (kp_cdi_device_node type, major,
  // minor), as a driver sets them: written as set, checked the same way.
  const built = async (name, t, maj, min, p) => run(`cdi-node:${DRIVER}_${name}.json:${t}:${maj}:${min}:${p}`);
  assert.match(await built('b-good', 'b', 7, 7, `${dev}/loop7`), /: ok/);
  const w = JSON.parse(fs.readFileSync(path.join(cdi, `${DRIVER}_b-good.json`), 'utf8'));
  assert.deepStrictEqual(w.devices[0].containerEdits.deviceNodes, [{ path: `${dev}/loop7`, type: 'b', major: 7, minor: 7 }]);
  assert.equal(w.cdiVersion, '0.3.0');
  assert.match(await built('b-disagree', 'b', 7, 8, `${dev}/loop7`), /KP_EINVAL.*do not agree with the host's node/);
  assert.match(await built('b-renamed', 'b', 8, 0, `${dev}/loop7`), /KP_EINVAL.*do not agree/);
  assert.match(await built('b-absent', 'b', 7, 60, `${dev}/loop60`), /: ok/);
  assert.match(await built('b-absent-c', 'c', 1, 1, `${dev}/loop61`), /KP_EINVAL.*must be within a declared number/);
  assert.match(await built('b-type', 'u', 7, 7, `${dev}/loop7`), /KP_EINVAL builder: device node type 117: not 0, 'c'/);
  assert.match(await built('b-major', 'b', 4096, 0, `${dev}/loop7`), /KP_EINVAL builder: device node major 4096: above 4095/);
  for (const n of ['b-disagree', 'b-renamed', 'b-absent-c', 'b-type', 'b-major'])
    assert.ok(!fs.existsSync(path.join(cdi, `${DRIVER}_${n}.json`)), n);
});

// Review findings of 2026-12-01, kept as regression tests: each attack
// must fail.

test('ATTACK: a FIFO planted as serialize.lock is refused; the supervisor never blocks on it and still stops', async (t) => {
  const { giveToNodeserver } = require('./lib/plugin');
  const { execFileSync } = require('node:child_process');
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  root.state = path.join(root.dir, 'state');
  giveToNodeserver(root.state);
  const lock = path.join(path.dirname(root.draSock), 'serialize.lock');
  const drv = new TestDriver(root, ['--kubelet-root-dir', root.dir, '--rolling-update-uid',
    '11111111-2222-3333-4444-aaaaaaaaaaaa', '--state-dir', root.state], { paths: false });
  t.after(async () => { drv.kill(); await drv.exited; });
  await drv.ready();
  assert.ok(fs.statSync(lock).isFile());
  // Someone who can write in the plugin data directory plants a FIFO,
  // then any nodeserver restart opens it.
  fs.unlinkSync(lock);
  execFileSync('mkfifo', [lock]);
  const before = roles(drv.proc.pid).nodeserver;
  process.kill(before, 'SIGKILL');
  await drv.stderrMatch(/lock file [^\n]*serialize\.lock is not a regular file/, 15000);
  // The supervisor is not stuck in open(): it answers and stops.
  const sup = supervisorPid(drv);
  assert.doesNotMatch(fs.readFileSync(`/proc/${sup}/wchan`, 'utf8'), /fifo|pipe/);
  const r = await drv.stop();
  assert.equal(r.code, 0, 'kp_stop answered');
});

test('ATTACK: a sandboxed hook of a second plugin in the same process cannot forge the first plugin\'s kp_plugin_wait() reason', async (t) => {
  const { spawn } = require('node:child_process');
  const R = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-two-'));
  fs.chmodSync(R, 0o755);
  fs.mkdirSync(path.join(R, 'plugins'));
  fs.mkdirSync(path.join(R, 'plugins_registry'));
  const p = spawn(path.join(BUILD, 'tests', 'kp_twoplugins'), [R], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  p.stdout.on('data', (d) => { out += d; });
  p.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((r) => p.on('exit', r));
  t.after(async () => { p.kill('SIGKILL'); await exited; fs.rmSync(R, { recursive: true, force: true }); });
  await until(() => out.includes('ready'), 20000, 100);
  const sim = new KubeletSim({ registryDir: path.join(R, 'plugins_registry'), version: '1.34', retryInitialMs: 100, healthStream: false }).start();
  t.after(() => sim.stop());
  await sim.waitForDriver('b.example.com');
  await sim.nodePrepareResources('b.example.com', [claim('c1')]);
  await until(() => /evil: wrote \d+ page/.test(err), 10000, 100);
  assert.match(err, /evil: wrote 0 page\(s\)/, 'no writable shared page inherited');
  fs.writeFileSync(path.join(R, 'go'), '');
  await until(() => /^wait /m.test(out), 20000, 100);
  const line = /^wait .*$/m.exec(out)[0];
  assert.doesNotMatch(line, /FORGED/);
  assert.match(line, /^wait KP_\w+ \S/, 'a reason of the library\'s own');
});
