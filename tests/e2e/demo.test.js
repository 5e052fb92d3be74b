'use strict';
// `make demo` as a test: tools/demo.sh against KP_BUILD exits 0 and shows
// each step's key line. When run as root, the demo also runs as an
// unprivileged user (the reduced sandbox with its note), if one can read
// the build and the node modules.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { ROOT, BUILD } = require('./lib/plugin');

function runDemo(prefix = []) {
  const cmd = [...prefix, path.join(ROOT, 'tools', 'demo.sh')];
  const r = spawnSync(cmd[0], cmd.slice(1), {
    cwd: ROOT, env: { ...process.env, KP_BUILD: BUILD }, timeout: 120000, encoding: 'utf8',
  });
  return { code: r.status, out: r.stdout || '', err: r.stderr || '' };
}

function checkKeyLines(out) {
  assert.match(out, /supported versions: {2}v1\.DRAPlugin, v1beta1\.DRAPlugin/);
  assert.match(out, /API kubelet chose: {3}v1 /);
  assert.match(out, /\$ kubectl get resourceslices -o wide\n\s+NAME\s+NODE\s+DRIVER\s+POOL\s+AGE/);
  assert.match(out, /\n\s+pci-[0-9a-f]{4}-[0-9a-f]{2}-[0-9a-f]{2}-[0-7]\s+[0-9a-f]{4}:/, 'a real device row');
  assert.match(out, /device: pci-[0-9a-f-]+/);
  assert.match(out, /CDI device IDs: {2}pci\.example\.com\/pci=pci-[0-9a-f-]+/);
  assert.match(out, /"cdiVersion": "0\.3\.0"/, 'the lowest version its fields need');
  assert.match(out, /journal \$TMP\/state\/kubeletplugin-journal\.json: schema 1, 1 prepared claim\(s\)/);
  assert.match(out, /journal: 0 prepared claim\(s\)/);
  assert.match(out, /"kind": "pci\.example\.com\/pci"/);
  assert.match(out, /PCI_ADDRESS_/);
  assert.match(out, /prepared again \(kubelet retries\): same result, spec file not rewritten/);
  assert.match(out, /CDI spec file: removed/);
  assert.match(out, /unprepare of a claim never prepared: success/);
  assert.match(out, /\n\s+nodeserver\s+\d+\s+\d+\s+\d+\s+none\s+yes\s+filter/);
  assert.match(out, /\n\s+registrar\s+\d+\s+\d+\s+\d+\s+none\s+yes\s+filter/);
  assert.match(out, /\n\s+publisher\s+\d+\s+\d+\s+\d+\s+none\s+yes\s+filter/);
  assert.match(out, /driver exited with status 0/);
  assert.match(out, /socket files removed/);
  assert.match(out, /demo finished: OK/);
}

test('tools/demo.sh runs the main job end to end and exits 0', () => {
  const r = runDemo();
  assert.equal(r.code, 0, `demo failed:\n${r.out}\n${r.err}`);
  checkKeyLines(r.out);
  if (process.getuid() === 0) {
    assert.match(r.out, /\n\s+registrar\s+\d+\s+\d+\s+61001\s/, 'registrar as its own uid');
    assert.match(r.out, /\n\s+nodeserver\s+\d+\s+\d+\s+61000\s/, 'nodeserver as its own uid');
  }
});

test('the demo runs without root, with a reduced sandbox and a note', (t) => {
  if (process.getuid() !== 0) {
    t.skip('already not root: the first test covered it');
    return;
  }
  // setpriv (util-linux) drops to nobody with no capabilities.
  const probe = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all',
    'sh', '-c', `test -x '${path.join(BUILD, 'examples', 'pci-driver')}' && test -r '${path.join(ROOT, 'node_modules', '@grpc', 'grpc-js', 'package.json')}' && test -w /tmp`]);
  if (probe.status !== 0) {
    t.skip('nobody cannot read the build or the node modules here');
    return;
  }
  const r = runDemo(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all']);
  assert.equal(r.code, 0, `demo failed:\n${r.out}\n${r.err}`);
  assert.match(r.out, /NOTE: not running as root: the plugin runs with a reduced sandbox/);
  checkKeyLines(r.out);
});

test('the README\'s minimal driver is examples/minimal-driver/main.c, and it works', async (t) => {
  const fs = require('node:fs');
  const { randomUUID } = require('node:crypto');
  const { until } = require('./lib/plugin');
  const { minimalPeers, cdiIds } = require('./lib/minimal');
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const src = fs.readFileSync(path.join(ROOT, 'examples', 'minimal-driver', 'main.c'), 'utf8');
  assert.ok(readme.includes(`\`\`\`c\n${src}\`\`\``), 'README shows examples/minimal-driver/main.c verbatim');
  assert.ok(src.split('\n').length <= 85, 'about 50 lines of code');

  const { DRIVER, emu, sim, start, claim } = await minimalPeers(t);
  const drv = start(path.join(BUILD, 'examples', 'minimal-driver'));
  await sim.waitForDriver(DRIVER, 15000);
  const slices = await until(() => {
    const s = emu.getSlices({ fieldSelector: `spec.driver=${DRIVER}` });
    return s.length === 1 ? s : null;
  }, 15000, 100);
  assert.equal(slices[0].spec.devices[0].name, 'dev-0');
  const c = claim(randomUUID());
  assert.deepEqual(cdiIds(await sim.nodePrepareResources(DRIVER, [c]), c.uid), [`${DRIVER}/dev=dev-0`]);
  await sim.nodeUnprepareResources(DRIVER, [c]);
  drv.proc.kill('SIGTERM');
  assert.equal((await drv.exited).code, 0, drv.stderr());
});

// The README's next step, docs/getting-started.md "CDI specs and the
// journal": its fragment goes into the minimal driver as that page says
// (its includes and prototype at the top, its functions for the minimal
// prepare, its main() lines before kp_start()), with the local try's two
// directories, and is built
// against the library like a driver of one's own: it must compile with
// -Wall -Werror, write the claim's spec and journal there, and rewrite a
// deleted spec through respec().
test('the CDI and journal fragment of docs/getting-started.md builds into the minimal driver and works with the local-try directories', { timeout: 90000 }, async (t) => {
  const fs = require('node:fs');
  const { randomUUID } = require('node:crypto');
  const { until } = require('./lib/plugin');
  const { minimalPeers, cdiIds } = require('./lib/minimal');
  const readme = fs.readFileSync(path.join(ROOT, 'docs', 'getting-started.md'), 'utf8');
  const m = /```c\n(\/\* beyond the minimal driver's includes[\s\S]*?)```/.exec(readme);
  assert.ok(m, 'the CDI and journal fragment');
  const frag = m[1];
  const iMain = frag.indexOf('/* main(), before kp_start()');
  const iFns = frag.indexOf('/* the claim\'s spec');
  assert.ok(iMain > 0 && iFns > iMain, 'includes, then main()\'s lines, then the functions');
  assert.match(frag.slice(0, iMain), /#include <string\.h>/);
  assert.match(frag.slice(0, iMain), /static int\trespec\(/);
  let src = fs.readFileSync(path.join(ROOT, 'examples', 'minimal-driver', 'main.c'), 'utf8');
  const sub = (from, to) => { assert.ok(src.includes(from), from); src = src.replace(from, to); };
  sub('#define DRIVER "minimal.example.com"\n', `#define DRIVER "minimal.example.com"\n\n${frag.slice(0, iMain)}`);
  const p0 = src.indexOf('static int\nprepare(');
  const p1 = src.indexOf('\n}\n', p0) + 3;
  assert.ok(p0 > 0 && p1 > p0, 'the minimal prepare');
  src = src.slice(0, p0) + frag.slice(iFns) + src.slice(p1);
  // The local try the page describes after the fragment.
  assert.match(readme, /`kp_journal_dir\(o, argv\[4\]\)` and `kp_cdi_directory\(o,\s+argv\[5\]\)`/);
  const inMain = frag.slice(iMain, iFns).replace('kp_journal_dir(o, "/var/lib/" DRIVER);',
    'kp_journal_dir(o, argv[4]);\nkp_cdi_directory(o, argv[5]);');
  assert.ok(inMain.includes('argv[5]'), 'the journal line');
  sub('\tif (kp_driver_name(o, DRIVER)', `${inMain.trim().split('\n').map((l) => `\t${l}`).join('\n')}\n\tif (kp_driver_name(o, DRIVER)`);
  sub('argc != 4', 'argc != 6');

  const { DRIVER, root, sim, start, claim: allocated } = await minimalPeers(t);
  const c = path.join(root.dir, 'journal-driver.c');
  const bin = path.join(root.dir, 'journal-driver');
  fs.writeFileSync(c, src);
  const cache = fs.readFileSync(path.join(BUILD, 'CMakeCache.txt'), 'utf8');
  const cc = (/^CMAKE_C_COMPILER:\w+=(.+)$/m.exec(cache) || [null, 'cc'])[1];
  const san = /^KP_SANITIZE:BOOL=ON$/m.test(cache) ? ['-fsanitize=address,undefined'] : [];
  const r = spawnSync(cc, ['-std=gnu11', '-Wall', '-Werror', ...san, '-I', path.join(ROOT, 'include'), c, '-o', bin,
    '-L', BUILD, '-lkubeletplugin', `-Wl,-rpath,${BUILD}`], { encoding: 'utf8' });
  assert.equal(r.status, 0, `the getting-started fragment does not build:\n${r.stderr}`);

  const state = path.join(root.dir, 'state');
  const cdi = path.join(root.dir, 'cdi');
  const drv = start(bin, [state, cdi]);
  await sim.waitForDriver(DRIVER, 15000);
  const claim = allocated(randomUUID());
  const ids = (res) => cdiIds(res, claim.uid);
  const dev = `dev-0-${claim.uid}`;
  assert.deepEqual(ids(await sim.nodePrepareResources(DRIVER, [claim])), [`${DRIVER}/dev=${dev}`], drv.stderr());
  const spec = path.join(cdi, `${DRIVER}_claim-${claim.uid}.json`);
  assert.match(fs.readFileSync(spec, 'utf8'), new RegExp(`MINIMAL_DEVICE=${dev}`));
  assert.ok(fs.existsSync(path.join(state, 'kubeletplugin-journal.json')), 'the journal beneath the state directory');
  // A spec a reboot deleted: the journal answers and respec() writes it.
  fs.rmSync(spec);
  await until(async () => {
    const res = await sim.nodePrepareResources(DRIVER, [claim]);
    assert.deepEqual(ids(res), [`${DRIVER}/dev=${dev}`]);
    return fs.existsSync(spec);
  }, 15000, 100);
  assert.match(fs.readFileSync(spec, 'utf8'), new RegExp(`MINIMAL_DEVICE=${dev}`));
  await sim.nodeUnprepareResources(DRIVER, [claim]);
  assert.ok(!fs.existsSync(spec), 'unprepare removed the spec');
  drv.proc.kill('SIGTERM');
  assert.equal((await drv.exited).code, 0, drv.stderr());
});

test('the minimal driver exits non-zero when its plugin stops on its own: a second instance on the same kubelet dir', { timeout: 60000 }, async (t) => {
  const { minimalPeers } = require('./lib/minimal');
  const { DRIVER, sim, start } = await minimalPeers(t);
  const bin = path.join(BUILD, 'examples', 'minimal-driver');
  const first = start(bin);
  await sim.waitForDriver(DRIVER, 15000);
  start(bin);
  const { code, signal } = await first.exited;
  assert.equal(signal, null, first.stderr());
  assert.notEqual(code, 0, first.stderr());
  assert.match(first.stderr(), /minimal-driver: the plugin stopped: .*another live instance serves there; stepping aside/, first.stderr());
});
