'use strict';
// Who maps which library (docs/security.md, "Libraries"): libcurl and
// libmicrohttpd are not linked; the publisher and the observer load them
// by soname before their sandbox, so GnuTLS, p11-kit, Kerberos, LDAP and
// the rest of their chains are mapped in those two processes only. Read
// from /proc/<pid>/maps of each running process of a plugin that has all
// of them (API access and kp_http_endpoint).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { kubeconfig } = require('../apiserver-emu');
const { makeRoot, TestDriver, TESTDRIVER, roles, until, freePort, withApi } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';

// The basenames of the shared objects a process maps.
function libraries(pid) {
  const out = new Set();
  for (const l of fs.readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n')) {
    const f = l.split(/\s+/)[5];
    if (f && f.startsWith('/') && /\.so/.test(f)) out.add(path.basename(f));
  }
  return [...out];
}

// What only the publisher's libcurl (and the observer's libmicrohttpd)
// pull in; none of it is ours.
const CURL_CHAIN = /^lib(curl|gnutls|p11-kit|rtmp|ldap|lber|sasl2|gssapi_krb5|krb5|k5crypto|ssh2|nghttp2|psl|hogweed|nettle|gmp|tasn1|unistring|idn2)[.-]/;
const MHD = /^libmicrohttpd\./;

test('libcurl and libmicrohttpd are mapped by the publisher and the observer only (not the monitor, the broker or another child)', async (t) => {
  const port = await freePort();
  const { emu, drv } = await withApi(t, makeRoot(DRIVER), ['--http-endpoint', `127.0.0.1:${port}`]);
  const l = await drv.command('publish 2 1 a', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  // The publisher has used libcurl (a slice written over TLS), the
  // observer libmicrohttpd (an answer).
  await until(() => emu.writes().length > 0);
  const r = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) });
  assert.equal(r.status, 200);
  const pids = { driver: drv.proc.pid, ...roles(drv.proc.pid) };
  for (const role of ['supervisor', 'broker', 'registrar', 'nodeserver', 'publisher', 'observer']) {
    assert.ok(pids[role], `no ${role} process: ${JSON.stringify(pids)}`);
  }
  for (const [role, pid] of Object.entries(pids)) {
    const libs = libraries(pid);
    assert.ok(libs.some((f) => /^libc\.so/.test(f)), `${role}: maps read (${libs.join(' ')})`);
    const curl = libs.filter((f) => CURL_CHAIN.test(f));
    const mhd = libs.filter((f) => MHD.test(f));
    if (role === 'publisher') {
      assert.ok(libs.some((f) => /^libcurl\.so\.4/.test(f)), `publisher: no libcurl in ${libs.join(' ')}`);
      assert.deepEqual(mhd, [], 'publisher maps libmicrohttpd');
    } else if (role === 'observer') {
      assert.ok(mhd.length === 1, `observer: no libmicrohttpd in ${libs.join(' ')}`);
      assert.ok(!libs.some((f) => /^libcurl\./.test(f)), 'observer maps libcurl');
    } else {
      assert.deepEqual(curl, [], `${role} maps libcurl's chain`);
      assert.deepEqual(mhd, [], `${role} maps libmicrohttpd`);
    }
  }
});

// Where the loader finds a soname (ld.so.cache), with symbolic links
// resolved: the file a bind mount can hide.
function sonamePath(so) {
  const r = spawnSync('ldconfig', ['-p'], { encoding: 'utf8' });
  const l = (r.stdout || '').split('\n').find((x) => x.trim().startsWith(`${so} `));
  return l ? fs.realpathSync(l.split('=>').pop().trim()) : null;
}

const canHide = process.getuid() === 0 && spawnSync('unshare', ['-m', 'true']).status === 0;

for (const [so, role, args] of [
  ['libcurl.so.4', 'publisher', (root, kc) => ['--kubeconfig', kc, '--node-name', NODE]],
  ['libmicrohttpd.so.12', 'observer', (root, kc, port) => ['--http-endpoint', `127.0.0.1:${port}`]],
]) {
  test(`without ${so} the ${role} fails to start and kp_start says which library is missing`,
    { skip: canHide ? false : 'needs root and unshare -m (a mount namespace to hide the library in)' }, async (t) => {
      const lib = sonamePath(so);
      assert.ok(lib, `${so} is not in ld.so.cache`);
      const root = makeRoot(DRIVER);
      const kc = path.join(root.dir, 'kubeconfig');
      // Never reached: the publisher fails before its first request.
      fs.writeFileSync(kc, kubeconfig({ server: 'https://127.0.0.1:1' }));
      fs.writeFileSync(path.join(root.dir, 'token'), 'x');
      fs.writeFileSync(path.join(root.dir, 'ca.crt'), '');
      // In a mount namespace of its own, /dev/null over the library file.
      const drv = new TestDriver(root, args(root, kc, await freePort()), {
        binary: 'unshare',
        prefixArgs: ['-m', 'sh', '-c', 'mount --bind /dev/null "$0" && exec "$@"', lib, TESTDRIVER],
      });
      t.after(async () => {
        drv.kill();
        await drv.exited;
        root.cleanup();
      });
      const l = await drv.line(['ready', 'error'], 30000);
      assert.match(l, new RegExp(`^error KP_ECHILD .*${so.replace(/\./g, '\\.')} cannot be loaded`), `${l}\n${drv.stderr}`);
      const { code } = await drv.exited;
      assert.notEqual(code, 0);
      // The plugin's log says it once, with the reason, and no more.
      const said = drv.stderr.split('\n').filter((x) => x.includes(`${so} cannot be loaded`));
      assert.equal(said.length, 1, drv.stderr);
      assert.match(said[0], new RegExp(`start failed: ${role}: `), drv.stderr);
      assert.doesNotMatch(drv.stderr, /exited with status/, drv.stderr);
      // Nothing was registered.
      assert.ok(!fs.existsSync(root.regSock), 'a registration socket is left');
    });
}

// An empty LD_LIBRARY_PATH entry means the working directory to the
// loader. A libcurl.so.4 planted in the driver's working directory (one
// a hostile nodeserver might write) must not run in the publisher, which
// holds the credentials: base/dl.c searches from "/".
test('ATTACK: a libcurl.so.4 in the working directory, LD_LIBRARY_PATH with an empty entry: not loaded', async (t) => {
  const root = makeRoot(DRIVER);
  const cwd = fs.mkdtempSync(path.join(root.dir, 'cwd-'));
  const marker = path.join(cwd, 'planted-ran');
  fs.writeFileSync(path.join(cwd, 'planted.c'),
    `#include <fcntl.h>\n__attribute__((constructor)) static void f(void) { open("${marker}", O_CREAT | O_WRONLY, 0644); }\n`);
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-o', path.join(cwd, 'libcurl.so.4'), path.join(cwd, 'planted.c')], { encoding: 'utf8' });
  assert.equal(cc.status, 0, cc.stderr);
  const { emu, drv } = await withApi(t, root, [], {
    binary: 'sh',
    prefixArgs: ['-c', 'cd "$0" && exec "$@"', cwd, TESTDRIVER],
    env: { LD_LIBRARY_PATH: ':/nonexistent' },
  });
  const l = await drv.command('publish 2 1 a', 'publish ');
  assert.match(l, /^publish KP_OK/, l);
  await until(() => emu.writes().length > 0);
  assert.ok(!fs.existsSync(marker), 'the planted library ran');
  const pub = roles(drv.proc.pid).publisher;
  assert.ok(pub, 'no publisher');
  // The libcurl it maps is the system's, none from the working directory.
  const maps = fs.readFileSync(`/proc/${pub}/maps`, 'utf8');
  assert.match(maps, /\/lib[^ \n]*\/libcurl\.so\.4/, 'the publisher maps no system libcurl');
  assert.ok(!maps.includes(cwd), `the publisher maps a file from ${cwd}`);
});
