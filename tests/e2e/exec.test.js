'use strict';
// Fresh address spaces (issue 24): the broker, the publisher and the
// observer are started by fork + exec of the driver's own binary, and the library's
// constructor runs the role before the driver's main(). Each generation
// gets a layout of its own (a crash-restart loop learns nothing of the
// supervisor's or of an earlier child's) and none of the driver's heap;
// the forked nodeserver is the control.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { makeRoot, roles, until, memFind, freePort, withApi, TESTDRIVER } = require('./lib/plugin');

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

test('the publisher and the observer are exec\'d: the driver\'s binary, a fresh layout each generation, none of the driver\'s heap', async (t) => {
  if (fs.readFileSync('/proc/sys/kernel/randomize_va_space', 'utf8').trim() === '0') {
    t.skip('ASLR is off on this machine (kernel.randomize_va_space 0)');
    return;
  }
  // The marker is in the driver's heap only: argv has it reversed.
  const marker = `kp-heap-${randomBytes(12).toString('hex')}`;
  const port = await freePort();
  const { drv } = await withApi(t, makeRoot(DRIVER), ['--http-endpoint', `127.0.0.1:${port}`,
    '--heap-marker', [...marker].reverse().join('')]);
  const dpid = await drv.pid();
  const r = roles(dpid);
  const binary = fs.realpathSync(TESTDRIVER);
  const sup = layout(r.supervisor);
  assert.equal(sup.exe, binary);

  // The controls: the supervisor and the forked nodeserver carry the
  // driver's heap and the supervisor's layout.
  assert.ok(memFind(r.supervisor, marker).length > 0, 'the marker is in the supervisor (forked from the driver)');
  assert.ok(memFind(r.nodeserver, marker).length > 0, 'the marker is in the forked nodeserver');
  assert.equal(layout(r.nodeserver).text, sup.text, 'the forked nodeserver shares the supervisor\'s layout');

  for (const role of ['publisher', 'observer', 'broker']) {
    const pid = r[role];
    assert.ok(pid, `${role} running`);
    const l = layout(pid);
    assert.deepEqual(memFind(pid, marker), [], `${role} holds the driver's heap`);
    assert.equal(l.exe, binary, `${role} runs the driver's binary`);
    assert.ok(l.text, `${role}: the binary is mapped`);
    assert.notEqual(l.text, sup.text, `${role}: the binary at the supervisor's base ${sup.text}`);
    assert.notEqual(l.stack, sup.stack, `${role}: the stack at the supervisor's ${sup.stack}`);
    if (sup.heap) assert.notEqual(l.heap, sup.heap, `${role}: the heap at the supervisor's ${sup.heap}`);
    assert.deepEqual(cmdline(pid), [`kp-${role}`], `${role}: argv is the role's name alone`);
  }

  // A new generation: a new layout again.
  const old = layout(r.publisher);
  process.kill(r.publisher, 'SIGKILL');
  await drv.stderrMatch(/publisher ready, pid \d+ \(restarted\)/);
  const pub2 = await until(() => {
    const p = roles(dpid).publisher;
    return p && p !== r.publisher ? p : null;
  });
  const l2 = layout(pub2);
  assert.equal(l2.exe, binary);
  assert.notEqual(l2.text, old.text, `the restarted publisher's binary at the previous one's base ${old.text}`);
  assert.notEqual(l2.stack, old.stack, 'the restarted publisher\'s stack at the previous one\'s');
  if (old.heap) assert.notEqual(l2.heap, old.heap, 'the restarted publisher\'s heap at the previous one\'s');
  assert.notEqual(l2.text, sup.text);
  assert.deepEqual(memFind(pub2, marker), []);
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

test('a driver started with the role marker in its environment fails at once, naming it', () => {
  const cases = [
    ['publisher:1', /fd 3 \(control channel\)/],
    ['nodeserver:1', /"nodeserver" is not a role started by exec/],
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
