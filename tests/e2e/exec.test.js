'use strict';
// Fresh address spaces (issue 24): every child and the broker are
// started by fork + exec of the driver's own binary. The library's
// constructor runs the roles without driver code before the driver's
// main(); the nodeserver (and a registrar with interceptors) runs main()
// again up to its kp_start(). Each generation gets a layout of its own (a
// crash-restart loop learns nothing of the monitor's or of an earlier
// child's) and none of the driver's heap; a nodeserver forked with
// kp_sandbox_exec(opts, 0) is the control.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { makeRoot, roles, until, memFind, freePort, withApi, TestDriver, TESTDRIVER } = require('./lib/plugin');

const DRIVER = 'test.example.com';

// Where the driver's binary, the heap and the stack are mapped in pid
// (heap null under ASan, whose allocator uses no brk heap).
function layout(pid) {
  const exe = fs.readlinkSync(`/proc/${pid}/exe`);
  const maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n');
  const base = (re) => {
    const l = maps.find((x) => re.test(x));
    return l ? l.split('-')[0] : null;
  };
  return { exe, text: base(new RegExp(` ${exe.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)), heap: base(/ \[heap\]$/), stack: base(/ \[stack\]$/) };
}

const cmdline = (pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

test('every child is exec\'d: the driver\'s binary, a fresh layout each generation; the roles without driver code hold none of the driver\'s heap, the nodeserver ran main() again', async (t) => {
  if (fs.readFileSync('/proc/sys/kernel/randomize_va_space', 'utf8').trim() === '0') {
    t.skip('ASLR is off on this machine (kernel.randomize_va_space 0)');
    return;
  }
  // The marker is in the driver's heap only: argv has it reversed.
  const marker = `kp-heap-${randomBytes(12).toString('hex')}`;
  const port = await freePort();
  const args = ['--http-endpoint', `127.0.0.1:${port}`, '--heap-marker', [...marker].reverse().join(''),
    '--random-heap-marker'];
  const { drv } = await withApi(t, makeRoot(DRIVER), args);
  const dpid = await drv.pid();
  // What this run of main() made; a run in the nodeserver makes another.
  const rnd = `kp-rnd-${drv.lines.find((l) => l.startsWith('heap-marker ')).split(' ')[1]}`;
  const r = roles(dpid);
  const binary = fs.realpathSync(TESTDRIVER);
  const sup = layout(r.supervisor);
  assert.equal(sup.exe, binary);
  // The control: the monitor, forked from the driver, carries its heap.
  assert.ok(memFind(r.supervisor, marker).length > 0, 'the marker is in the monitor (forked from the driver)');
  assert.ok(memFind(r.supervisor, rnd).length > 0, 'the random marker is in the monitor');

  for (const role of ['publisher', 'observer', 'broker', 'registrar', 'nodeserver']) {
    const pid = r[role];
    assert.ok(pid, `${role} running`);
    const l = layout(pid);
    assert.equal(l.exe, binary, `${role} runs the driver's binary`);
    assert.ok(l.text, `${role}: the binary is mapped`);
    assert.notEqual(l.text, sup.text, `${role}: the binary at the monitor's base ${sup.text}`);
    assert.notEqual(l.stack, sup.stack, `${role}: the stack at the monitor's ${sup.stack}`);
    if (sup.heap) assert.notEqual(l.heap, sup.heap, `${role}: the heap at the monitor's ${sup.heap}`);
    assert.deepEqual(memFind(pid, rnd), [], `${role} holds the driver's heap (its random marker)`);
    if (role === 'nodeserver') {
      // main() ran again, with the driver's argv, up to kp_start().
      assert.deepEqual(cmdline(pid), cmdline(dpid), 'the nodeserver got the driver\'s argv');
    } else {
      assert.deepEqual(memFind(pid, marker), [], `${role} holds the driver's heap`);
      assert.deepEqual(cmdline(pid), [`kp-${role}`], `${role}: argv is the role's name alone`);
    }
  }
  await drv.stderrMatch(/nodeserver\] .*the driver's main\(\) ran again/);

  // New generations: a new layout again, the nodeserver's too.
  for (const role of ['publisher', 'nodeserver']) {
    const old = layout(r[role]);
    process.kill(r[role], 'SIGKILL');
    await drv.stderrMatch(new RegExp(`${role} ready, pid \\d+ \\(restarted\\)`));
    const pid2 = await until(() => {
      const p = roles(dpid)[role];
      return p && p !== r[role] ? p : null;
    });
    const l2 = layout(pid2);
    assert.equal(l2.exe, binary);
    assert.notEqual(l2.text, old.text, `the restarted ${role}'s binary at the previous one's base ${old.text}`);
    assert.notEqual(l2.stack, old.stack, `the restarted ${role}'s stack at the previous one's`);
    if (old.heap) assert.notEqual(l2.heap, old.heap, `the restarted ${role}'s heap at the previous one's`);
    assert.notEqual(l2.text, sup.text);
    assert.deepEqual(memFind(pid2, rnd), []);
  }
});

test('kp_sandbox_exec(opts, 0) forks the nodeserver (the monitor\'s layout and the driver\'s heap: the control); the registrar without interceptors is exec\'d all the same, with interceptors it runs main() again', async (t) => {
  {
    const { drv } = await withApi(t, makeRoot(DRIVER), ['--fork-hooks', '--random-heap-marker']);
    const dpid = await drv.pid();
    const rnd = `kp-rnd-${drv.lines.find((l) => l.startsWith('heap-marker ')).split(' ')[1]}`;
    const r = roles(dpid);
    assert.ok(memFind(r.nodeserver, rnd).length > 0, 'the forked nodeserver holds the driver\'s heap');
    assert.equal(layout(r.nodeserver).text, layout(r.supervisor).text, 'the forked nodeserver shares the monitor\'s layout');
    assert.deepEqual(memFind(r.registrar, rnd), []);
    assert.deepEqual(cmdline(r.registrar), ['kp-registrar']);
    await drv.stop();
  }
  const { drv } = await withApi(t, makeRoot(DRIVER), ['--interceptors']);
  const dpid = await drv.pid();
  const r = roles(dpid);
  assert.deepEqual(cmdline(r.registrar), cmdline(dpid), 'the registrar with interceptors got the driver\'s argv');
  assert.notEqual(layout(r.registrar).text, layout(r.supervisor).text);
});

test('a main() that reaches kp_start() with other options in the exec\'d nodeserver, or none, fails that start naming why; the plugin serves again once main() agrees', async (t) => {
  const root = makeRoot(DRIVER);
  const f = `${root.dir}/driver-name`;
  fs.writeFileSync(f, `${DRIVER}\n`);
  const { drv } = await withApi(t, root, ['--driver-name-file', f]);
  const dpid = await drv.pid();
  // The driver's config changes under it; the next nodeserver reads it.
  fs.writeFileSync(f, 'other.example.com\n');
  process.kill(roles(dpid).nodeserver, 'SIGKILL');
  await drv.stderrMatch(/the driver's main\(\), run again in the exec'd nodeserver, reached kp_start\(\) with other options than the plugin's: driver_name: "test\.example\.com" in the plugin, "other\.example\.com" here/, 15000);
  fs.writeFileSync(f, 'Not A Name!\n');
  await drv.stderrMatch(/the driver's main\(\), run again in the exec'd nodeserver, ended before it reached kp_start\(\)/, 15000);
  fs.writeFileSync(f, `${DRIVER}\n`);
  await drv.stderrMatch(/nodeserver ready, pid \d+ \(restarted\)/, 20000);
  assert.ok(roles(dpid).nodeserver, 'a nodeserver serves again');
});

test('the broker is exec\'d too; with a driver log function, the broker\'s and the children\'s lines reach it in the driver process, never in another', async (t) => {
  const { drv } = await withApi(t, makeRoot(DRIVER), ['--log-callback', '-v', '2']);
  const dpid = await drv.pid();
  const r = roles(dpid);
  assert.ok(r.broker, JSON.stringify(r));
  assert.deepEqual(cmdline(r.broker), ['kp-broker']);
  assert.equal(fs.readlinkSync(`/proc/${r.broker}/exe`), fs.realpathSync(TESTDRIVER));
  await drv.stderrMatch(/^CB pid=\d+ level=\d v=\d+ role=broker: plugin test\.example\.com started$/m);
  await drv.stderrMatch(/^CB pid=\d+ level=\d v=\d+ role=publisher: /m);
  const pids = new Set([...drv.stderr.matchAll(/^CB pid=(\d+) /gm)].map((m) => Number(m[1])));
  assert.deepEqual([...pids], [dpid], 'the log function ran in the driver process alone');
  // The sandboxed processes' lines do not also go to stderr as klog lines.
  assert.doesNotMatch(drv.stderr, /^I\d{4} [\d:.]+ +\d+ (broker|publisher|nodeserver)\] /m);
});

test('a main() that puts a file on stderr before kp_start() fails the exec\'d nodeserver\'s start, naming fd 2: the hooks\' bytes never bypass the log relay', async (t) => {
  const root = makeRoot(DRIVER);
  t.after(() => root.cleanup());
  const f = `${root.dir}/driver.log`;
  const drv = new TestDriver(root, ['--stderr-to', f]);
  t.after(() => drv.kill());
  const l = await drv.line(['ready', 'error']);
  assert.match(l, /^error KP_ECHILD .*replaced fd 2 \(stderr, the log relay\) before kp_start\(\)/);
  // The control: with the nodeserver forked, the same main() starts.
  const root2 = makeRoot(DRIVER);
  t.after(() => root2.cleanup());
  const drv2 = new TestDriver(root2, ['--stderr-to', `${root2.dir}/driver.log`, '--fork-hooks']);
  t.after(() => drv2.kill());
  assert.match(await drv2.line(['ready', 'error']), /^ready /);
  await drv2.stop();
});

test('a driver started with the role marker in its environment fails at once, naming it', () => {
  const cases = [
    ['publisher:1', /fd 3 \(control channel\)/],
    ['nodeserver:1', /"nodeserver" is not a role started by exec/],
    ['nodeserver:1:main', /fd 3 \(control channel\)/],
    ['publisher:1:main', /"publisher" is not a role whose main\(\) runs again/],
    ['nodeserver:1:other', /"other" after the version, expected "main"/],
    ['publisher:999', /version 999, this library speaks 1/],
    ['publisher', /expected <role>:<version>/],
  ];
  for (const [value, re] of cases) {
    const p = spawnSync(TESTDRIVER, ['--driver-name', DRIVER], {
      env: { ...process.env, KP_ROLE_EXEC: value }, input: '', encoding: 'utf8', timeout: 10000,
    });
    assert.equal(p.status, 1, `KP_ROLE_EXEC=${value}: status ${p.status}, stdout ${p.stdout}`);
    assert.match(p.stderr, re, `KP_ROLE_EXEC=${value}`);
    assert.doesNotMatch(p.stdout, /ready/, 'the driver\'s main() ran');
  }
});

test('a device call main() makes before kp_start() is refused in the exec\'d nodeserver\'s run, and the log line says where it belongs', async (t) => {
  const { drv } = await withApi(t, makeRoot(DRIVER), ['--ioctl-before-start']);
  await drv.stderrMatch(/the driver's main\(\), run again: sandbox denied ioctl \(EPERM\): the supervisor's filter; make main\(\)'s own calls after kp_start\(\) returns \(kp_policy_main_syscall\(\) or kp_policy_main_ioctl\(\) for the pod's profile\)/, 15000);
  assert.match(drv.stderr, /nodeserver ready/, 'the plugin serves: the refused call returned EPERM to main()');
});
