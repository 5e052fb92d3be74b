'use strict';
// The library as a driver author gets it (issue 26): cmake --install into
// a prefix of its own, then the README's pkg-config lines, which must
// build the minimal driver against the shared library and against the
// archive, with no Cflags but the include directory (gRPC's pkg-config
// Cflags are -DNOMINMAX, which no driver should get). Both builds run as
// a plugin: registered, one slice published, a claim prepared. The build
// tree's lines of docs/getting-started.md are compiled too.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync, execFileSync } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const { ROOT, BUILD, until } = require('./lib/plugin');
const { minimalPeers, cdiIds } = require('./lib/minimal');

// A directory every uid may enter: the plugin's processes exec the
// driver's binary again under uids of their own and load its libraries.
function openDir() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-install-'));
  fs.chmodSync(d, 0o755);
  return d;
}

// The compiler the build used, and the sanitizers of an ASan build
// (its library needs their run time in the driver).
function compiler() {
  const cache = fs.readFileSync(path.join(BUILD, 'CMakeCache.txt'), 'utf8');
  const cc = (/^CMAKE_C_COMPILER:\w+=(.+)$/m.exec(cache) || [null, 'cc'])[1];
  const san = /^KP_SANITIZE:BOOL=ON$/m.test(cache) ? ' -fsanitize=address,undefined' : '';
  return cc + san;
}

// The shell commands of a Markdown page's sh block that contains `marker`,
// continuation lines joined and comments dropped.
function shBlock(file, marker) {
  const md = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const block = [...md.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes(marker));
  assert.ok(block, `${file}: the sh block with ${marker}`);
  return block.replace(/\\\n\s*/g, ' ').split('\n').map((l) => {
    const kind = (/#\s*(shared|static)\b/.exec(l) || [])[1];
    return { cmd: l.replace(/\s+#.*$/, '').trim(), kind };
  }).filter((l) => l.cmd !== '');
}

function sh(cmd, env, cwd) {
  const r = spawnSync('sh', ['-c', cmd], { cwd, env, encoding: 'utf8' });
  assert.equal(r.status, 0, `${cmd}\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

function needed(bin) {
  return execFileSync('readelf', ['-d', bin], { encoding: 'utf8' })
    .split('\n').map((l) => (/\(NEEDED\).*\[(.+)\]/.exec(l) || [])[1]).filter(Boolean);
}

// The minimal driver as a plugin: registration, its slice, one prepare.
async function runsAsPlugin(t, bin) {
  const { DRIVER, emu, sim, start, claim } = await minimalPeers(t);
  const drv = start(bin);
  await sim.waitForDriver(DRIVER, 15000);
  await until(() => emu.getSlices({ fieldSelector: `spec.driver=${DRIVER}` }).length === 1, 15000, 100);
  const c = claim(randomUUID());
  assert.deepEqual(cdiIds(await sim.nodePrepareResources(DRIVER, [c]), c.uid), [`${DRIVER}/dev=dev-0`], drv.stderr());
  drv.proc.kill('SIGTERM');
  assert.equal((await drv.exited).code, 0, drv.stderr());
}

test('installed: pkg-config --cflags kubeletplugin is the include directory alone (no -DNOMINMAX), and the README\'s shared and static lines build a driver that runs', { timeout: 180000 }, async (t) => {
  const prefix = openDir();
  const work = openDir();
  t.after(() => { fs.rmSync(prefix, { recursive: true, force: true }); fs.rmSync(work, { recursive: true, force: true }); });
  fs.copyFileSync(path.join(ROOT, 'examples', 'minimal-driver', 'main.c'), path.join(work, 'mydriver.c'));
  const lines = shBlock('README.md', 'pkg-config --cflags --libs kubeletplugin');
  const env = { ...process.env, HOME: prefix };
  delete env.PKG_CONFIG_PATH;
  // The block as written, with $HOME/.local the test's prefix and the
  // build directory the one under test.
  const local = path.join(prefix, '.local');
  const at = (cmd) => cmd.replace(/\$HOME\/\.local/g, local);
  const install = lines.find((l) => l.cmd.startsWith('cmake --install'));
  assert.ok(install, 'the install line');
  sh(at(install.cmd).replace(/--install build\b/, `--install '${BUILD}'`), env, ROOT);
  fs.chmodSync(prefix, 0o755);
  const exp = /^export PKG_CONFIG_PATH=(\S+)$/.exec((lines.find((l) => l.cmd.startsWith('export ')) || {}).cmd || '');
  assert.ok(exp, 'the PKG_CONFIG_PATH line');
  env.PKG_CONFIG_PATH = at(exp[1]);
  assert.ok(fs.existsSync(path.join(env.PKG_CONFIG_PATH, 'kubeletplugin.pc')), 'kubeletplugin.pc where the README says');

  // What a driver's compile line gets, shared or static.
  for (const args of [['--cflags'], ['--static', '--cflags']]) {
    const cflags = execFileSync('pkg-config', [...args, 'kubeletplugin'], { env, encoding: 'utf8' }).trim();
    assert.equal(cflags, `-I${path.join(local, 'include')}`, `pkg-config ${args.join(' ')} kubeletplugin`);
  }
  // gRPC is linked, not a module the driver's Cflags come from.
  const pc = fs.readFileSync(path.join(env.PKG_CONFIG_PATH, 'kubeletplugin.pc'), 'utf8');
  assert.doesNotMatch(/^Requires.*$/m.exec(pc)[0], /\bgrpc\b/);
  assert.match(execFileSync('pkg-config', ['--static', '--libs', 'kubeletplugin'], { env, encoding: 'utf8' }), /-lgrpc\b/);

  const cc = compiler();
  const bins = {};
  for (const l of lines.filter((x) => x.kind)) {
    assert.match(l.cmd, /^cc mydriver\.c -o mydriver /);
    bins[l.kind] = path.join(work, `mydriver-${l.kind}`);
    sh(at(l.cmd).replace(/^cc mydriver\.c -o mydriver /, `${cc} mydriver.c -o mydriver-${l.kind} `), env, work);
  }
  assert.deepEqual(Object.keys(bins).sort(), ['shared', 'static']);
  assert.ok(needed(bins.shared).includes('libkubeletplugin.so.0'), 'the shared build loads the library');
  assert.ok(!needed(bins.static).some((n) => n.startsWith('libkubeletplugin')), 'the static build has the archive in it');
  for (const kind of ['shared', 'static']) {
    await t.test(`the ${kind} build runs as a plugin`, async (st) => runsAsPlugin(st, bins[kind]));
  }
});

test('the build tree: the static and shared lines of docs/getting-started.md build the minimal driver', { timeout: 120000 }, (t) => {
  const work = openDir();
  t.after(() => fs.rmSync(work, { recursive: true, force: true }));
  const lines = shBlock('docs/getting-started.md', 'kp=$PWD');
  const cc = compiler();
  let n = 0;
  for (const l of lines.filter((x) => x.kind)) {
    assert.match(l.cmd, /^cc -I\$kp\/include mydriver\.c -o mydriver /);
    const cmd = l.cmd.replace(/\$kp\/build\b/g, BUILD).replace(/\$kp/g, ROOT)
      .replace(/^cc (.*) -o mydriver /, `${cc} $1 -o mydriver-${l.kind} `);
    fs.copyFileSync(path.join(ROOT, 'examples', 'minimal-driver', 'main.c'), path.join(work, 'mydriver.c'));
    sh(cmd, process.env, work);
    const r = spawnSync(path.join(work, `mydriver-${l.kind}`), [], { encoding: 'utf8' });
    assert.equal(r.status, 2, `${l.kind}: ${r.stderr}`);
    assert.match(r.stderr, /usage: minimal-driver NODE KUBECONFIG KUBELET_DIR/);
    n++;
  }
  assert.equal(n, 2, 'a static and a shared line');
});
