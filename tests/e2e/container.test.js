'use strict';
// The example driver's image (make image) in a real container runtime, run
// as the DaemonSet runs it: podman with the kubelet's directories and the
// CDI directory bind-mounted at the same paths, every capability dropped
// but the DaemonSet's (read from deploy/base/daemonset.yaml, the one place
// that lists them), the committed OCI seccomp profile
// (deploy/seccomp/kubeletplugin.json, kept current by deploy.test.js),
// no_new_privs, a read-only root with only /tmp writable, in-cluster
// credentials (token and CA at the service-account path, KUBERNETES_SERVICE_*)
// and the host's network for the API-server emulator's port. The kubelet
// simulator and the emulator run outside: registration, a prepare with its
// CDI spec in the mounted directory, published ResourceSlices.
//
// Then the same container under the profile without `setresuid`: the
// profile's default action answers EPERM, the registrar cannot switch to
// its own uid, and docs/security.md says a sandbox failure is fatal for
// the child (`sandbox: <reason>`, kp_start() fails with KP_ECHILD), never
// a child left as root: the driver exits 1 and nothing registers. (Not
// `seccomp`: without it libseccomp loads the children's filters through
// prctl(PR_SET_SECCOMP) and the plugin runs confined as usual.)
//
// Where the kernel has AppArmor, the same container once more under
// deploy/apparmor/kubeletplugin (components/apparmor: the profile loaded
// with apparmor_parser, podman --security-opt apparmor=kubeletplugin);
// where it has none, that test skips and says so.
//
// Skips, with the reason, when not root, without podman, or when no OCI
// runtime can start a container here (crun 1.8 refuses hybrid cgroup
// hierarchies: "cgroups in hybrid mode not supported"; runc is tried
// next).

const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const { ROOT, BUILD } = require('./lib/plugin');
const { KubeletSim } = require(path.join(ROOT, 'tests', 'kubelet-sim'));
const { startEmulator } = require(path.join(ROOT, 'tests', 'apiserver-emu'));
const { podman, ulimits, loadAppArmor } = require('./lib/container');

const IMAGE = process.env.KP_IMAGE || 'localhost/kubeletplugin/pci-driver:0.1.0';
const PROFILE = path.join(ROOT, 'deploy', 'seccomp', 'kubeletplugin.json');
const DAEMONSET = path.join(ROOT, 'deploy', 'base', 'daemonset.yaml');
const DRIVER = 'pci.example.com';
const NODE = 'node-1';
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

// The plugin container of the base DaemonSet (python3-yaml: node has no
// YAML parser).
function baseContainer() {
  const out = execFileSync('/usr/bin/python3', ['-c',
    'import json, sys, yaml\nprint(json.dumps(yaml.safe_load(open(sys.argv[1]))))', DAEMONSET]);
  return JSON.parse(out.toString()).spec.template.spec.containers.find((c) => c.name === 'plugin');
}

// The image, built afresh from this build (about 2 s: a stale image would
// test old code); then the first OCI runtime that starts it.
function probe() {
  if (process.getuid() !== 0) return { skip: 'needs root (rootful podman: the plugin needs real capabilities)' };
  if (spawnSync('podman', ['--version']).error) return { skip: 'podman is not installed (tools/deps.sh installs it)' };
  if (!process.env.KP_IMAGE) {
    const b = spawnSync(path.join(ROOT, 'tools', 'image.sh'), [BUILD, IMAGE], { encoding: 'utf8' });
    if (b.status !== 0) return { fail: `tools/image.sh failed: ${b.stderr}` };
  }
  const tried = [];
  for (const rt of ['crun', 'runc']) {
    const r = podman(['--runtime', rt, 'run', '--rm', ...ulimits(), '--network', 'none', IMAGE, '--help']);
    if (r.status === 0) return { runtime: rt, tried };
    tried.push(`${rt}: ${(r.stderr || String(r.error)).trim().split('\n').pop()}`);
  }
  return { skip: `no OCI runtime starts a container here: ${tried.join('; ')}` };
}
const P = probe();
if (P.fail) throw new Error(P.fail);
const opts = P.skip ? { skip: P.skip } : {};
if (P.skip) process.stderr.write(`container.test.js: skipped: ${P.skip}\n`);

// AppArmor in this kernel: the profile loaded, the podman options.
const AA = P.skip ? { skip: P.skip } : loadAppArmor();
if (AA.skip && !P.skip) process.stderr.write(`container.test.js: AppArmor: ${AA.skip}\n`);

// A kubelet-like host: root dir, CDI dir, service-account dir; the
// emulator; the container's podman arguments as the DaemonSet has them.
async function setup(t, profile, { nnp = true, extra = [] } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-ctr-'));
  const kubeletDir = path.join(dir, 'kubelet');
  const registry = path.join(kubeletDir, 'plugins_registry');
  const pluginDir = path.join(kubeletDir, 'plugins', DRIVER);
  const cdiDir = path.join(dir, 'cdi');
  const sa = path.join(dir, 'serviceaccount');
  // The nodeserver's state directory: a hostPath volume in the DaemonSet
  // (/var/lib/<driver>), here a directory of the test's.
  const stateDir = path.join(dir, 'state');
  for (const d of [registry, pluginDir, cdiDir, sa, stateDir]) fs.mkdirSync(d, { recursive: true });
  const emu = await startEmulator({ versions: ['v1', 'v1beta1'], nodes: [NODE], tokenFile: path.join(sa, 'token') });
  fs.copyFileSync(emu.caFile, path.join(sa, 'ca.crt'));
  fs.writeFileSync(path.join(sa, 'namespace'), 'dra-pci-driver');

  const c = baseContainer();
  const env = { DRIVER_NAME: DRIVER, KUBELET_DIR: kubeletDir, CDI_DIR: cdiDir, NODE_NAME: NODE };
  // Kubernetes expands $(VAR) in args from the container's environment.
  // The observer as components/probes adds it, on a port of the host
  // network (--network host).
  const httpPort = 20000 + Math.floor(Math.random() * 20000);
  const args = c.args.map((a) => a.replace(/\$\((\w+)\)/g, (_, v) => env[v])).concat(['--rescan=0', '-v1',
    `--http-endpoint=127.0.0.1:${httpPort}`]);
  const name = `kp-ctr-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const sc = c.securityContext;
  const run = ['--runtime', P.runtime, 'run', '-d', '--name', name, ...ulimits(),
    '--network', 'host', '--read-only', '--read-only-tmpfs=false', '--tmpfs', '/tmp:rw,size=1m',
    '--cap-drop', 'ALL', ...sc.capabilities.add.flatMap((cap) => ['--cap-add', cap]),
    '--security-opt', `seccomp=${profile}`, ...(nnp ? ['--security-opt', 'no-new-privileges'] : []), ...extra,
    '-v', `${registry}:${registry}`, '-v', `${pluginDir}:${pluginDir}`, '-v', `${cdiDir}:${cdiDir}`,
    '-v', `${sa}:${SA_DIR}:ro`, '-v', `${stateDir}:/var/lib/${DRIVER}`,
    '-e', 'KUBERNETES_SERVICE_HOST=127.0.0.1', '-e', `KUBERNETES_SERVICE_PORT=${emu.port}`,
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    IMAGE, ...args];
  const h = { dir, registry, cdiDir, emu, name, run, caps: sc.capabilities.add, kubeletDir, httpPort };
  t.after(async () => {
    if (h.kubelet) await h.kubelet.stop();
    podman(['rm', '-f', '-t', '2', name]);
    await emu.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return h;
}

const logs = (h) => { const r = podman(['logs', h.name]); return `${r.stdout}${r.stderr}`; };
const state = (h) => podman(['inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', h.name]).stdout.trim();

test('the image runs as the DaemonSet runs it: registers, publishes, prepares into the CDI dir', opts, async (t) => {
  const h = await setup(t, PROFILE);
  const t0 = Date.now();
  const r = podman(h.run);
  assert.equal(r.status, 0, `podman run: ${r.stderr}`);
  t.diagnostic(`runtime ${P.runtime}, capabilities ${h.caps.join(',')}`);
  try {
    await until('pci-driver serving', () => {
      if (/pci-driver: serving/.test(logs(h))) return true;
      if (!state(h).startsWith('running')) throw new Error(`container ${state(h)}`);
      return false;
    });
  } catch (e) {
    assert.fail(`${e.message}:\n${logs(h)}`);
  }
  // Inside: the capabilities and the filter are the runtime's.
  const pid = podman(['inspect', '--format', '{{.State.Pid}}', h.name]).stdout.trim();
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  assert.match(status, /^Seccomp:\s+2$/m, 'the driver process is under the runtime\'s filter');
  assert.match(status, /^NoNewPrivs:\s+1$/m);
  const bnd = BigInt(`0x${/^CapBnd:\s+(\w+)/m.exec(status)[1]}`);
  const CAPS = { CHOWN: 0, DAC_OVERRIDE: 1, DAC_READ_SEARCH: 2, FOWNER: 3, FSETID: 4, KILL: 5, SETGID: 6, SETUID: 7,
    SETPCAP: 8, NET_BIND_SERVICE: 10, NET_ADMIN: 12, NET_RAW: 13, SYS_CHROOT: 18, SYS_PTRACE: 19, SYS_ADMIN: 21,
    SYS_RESOURCE: 24, MKNOD: 27, AUDIT_WRITE: 29, SETFCAP: 31 };
  let want = 0n;
  for (const c of h.caps) want |= 1n << BigInt(CAPS[c]);
  assert.equal(bnd, want, `bounding set ${bnd.toString(16)}: exactly the DaemonSet's capabilities`);

  h.kubelet = new KubeletSim({ registryDir: h.registry }).start();
  await h.kubelet.waitForDriver(DRIVER, 15000);
  const sel = `spec.driver=${DRIVER},spec.nodeName=${NODE}`;
  const slices = await until('ResourceSlices', () => {
    const s = h.emu.getSlices({ fieldSelector: sel });
    return s.length && s.flatMap((x) => x.spec.devices || []).length ? s : null;
  });
  const device = slices[0].spec.devices[0].name;
  const claim = { namespace: 'default', name: 'c1', uid: randomUUID() };
  h.emu.addClaim({ ...claim, allocation: { results: [{ request: 'pci', driver: DRIVER, pool: NODE, device }] } });
  const res = await h.kubelet.nodePrepareResources(DRIVER, [claim]);
  const got = res.claims[claim.uid];
  assert.ok(got && !got.error, `prepare: ${JSON.stringify(got)}\n${logs(h)}`);
  const spec = path.join(h.cdiDir, `${DRIVER}_claim-${claim.uid}.json`);
  assert.ok(fs.existsSync(spec), `CDI spec ${spec} written through the mount`);
  const cdi = JSON.parse(fs.readFileSync(spec, 'utf8'));
  assert.equal(cdi.kind, `${DRIVER}/pci`);
  t.diagnostic(`registered, ${slices.length} slice(s), prepared ${device} in ${Date.now() - t0} ms`);
  // The probes of components/probes and components/probes/exec, in the
  // container under its profile and capabilities.
  const ready = await until('readyz 200', async () => {
    const x = await fetch(`http://127.0.0.1:${h.httpPort}/readyz`).catch(() => null);
    return x && x.status === 200 ? x : null;
  });
  assert.equal(await ready.text(), 'ok\n');
  const ex = podman(['exec', h.name, '/usr/local/bin/kubeletplugin-probe', `--driver-name=${DRIVER}`,
    `--kubelet-dir=${h.kubeletDir}`, '--pod-uid-env=POD_UID']);
  assert.equal(ex.status, 0, `exec probe: ${ex.stdout}${ex.stderr}`);
  const un = await h.kubelet.nodeUnprepareResources(DRIVER, [claim]);
  assert.ok(!(un.claims[claim.uid] || {}).error);
  assert.ok(!fs.existsSync(spec), 'unprepare removed the spec');
  // A clean stop on SIGTERM, as the kubelet stops a pod.
  const stop = podman(['stop', '-t', '10', h.name]);
  assert.equal(stop.status, 0, stop.stderr);
  assert.equal(state(h), 'exited 0', logs(h));
});

test('under the profile without setresuid(2) the sandbox fails closed: the driver exits, nothing registers', opts, async (t) => {
  const p = JSON.parse(fs.readFileSync(PROFILE, 'utf8'));
  let removed = 0;
  for (const r of p.syscalls) {
    if (r.action !== 'SCMP_ACT_ALLOW') continue;
    const n = r.names.length;
    r.names = r.names.filter((s) => s !== 'setresuid');
    removed += n - r.names.length;
  }
  assert.equal(removed, 1, 'the profile allows setresuid(2) once');
  p.syscalls = p.syscalls.filter((r) => r.names.length);
  const variant = path.join(os.tmpdir(), `kp-ctr-nosetresuid-${process.pid}.json`);
  fs.writeFileSync(variant, JSON.stringify(p));
  t.after(() => fs.rmSync(variant, { force: true }));
  const h = await setup(t, variant);
  const r = podman(h.run);
  assert.equal(r.status, 0, `podman run: ${r.stderr}`);
  const st = await until('the container to exit', () => {
    const s = state(h);
    return s.startsWith('exited') ? s : null;
  });
  const log = logs(h);
  assert.equal(st, 'exited 1', `the driver must fail:\n${log}`);
  assert.match(log, /KP_ECHILD: \w+: sandbox: .*Operation not permitted/,
    `a child's sandbox error with EPERM, as docs/security.md says:\n${log}`);
  assert.doesNotMatch(log, /pci-driver: serving/);
  assert.deepEqual(fs.readdirSync(h.registry).filter((f) => f.endsWith('.sock')), [], 'no registration socket left');
  assert.equal(h.emu.getSlices({ fieldSelector: `spec.driver=${DRIVER}` }).length, 0, 'nothing published');
  t.diagnostic(`${st}: ${log.split('\n').find((l) => /KP_ECHILD/.test(l))}`);
});

// Kubernetes refuses allowPrivilegeEscalation: false next to SYS_ADMIN, so
// in a pod the runtime loads the profile without no_new_privs, earlier
// (runc: before it switches users): the profile then needs the runtime's
// own syscalls, which kubeletplugin-policy adds (--no-runtime leaves them
// out, and the container does not start).
test('without no-new-privileges, as a pod runs: the profile starts it, the library\'s union alone does not', opts, async (t) => {
  const h = await setup(t, PROFILE, { nnp: false });
  assert.equal(podman(h.run).status, 0);
  await until('pci-driver serving', () => {
    if (/pci-driver: serving/.test(logs(h))) return true;
    if (!state(h).startsWith('running')) throw new Error(`container ${state(h)}:\n${logs(h)}`);
    return false;
  });
  podman(['rm', '-f', '-t', '2', h.name]);

  const bare = path.join(os.tmpdir(), `kp-ctr-bare-${process.pid}.json`);
  fs.writeFileSync(bare, execFileSync(path.join(BUILD, 'tools', 'kubeletplugin-policy'), ['--no-runtime']));
  t.after(() => fs.rmSync(bare, { force: true }));
  const h2 = await setup(t, bare, { nnp: false });
  const r = podman(h2.run);
  assert.notEqual(r.status, 0, 'the runtime cannot start the container');
  assert.match(r.stderr, /operation not permitted/i);
  t.diagnostic(`--no-runtime: ${r.stderr.trim().split('\n').pop()}`);
});

test('under deploy/apparmor/kubeletplugin (components/apparmor) the plugin starts, registers and confines itself', AA.skip ? { skip: AA.skip } : {}, async (t) => {
  const h = await setup(t, PROFILE, { nnp: false, extra: AA.opts });
  const r = podman(h.run);
  assert.equal(r.status, 0, `podman run: ${r.stderr}`);
  await until('pci-driver serving', () => {
    if (/pci-driver: serving/.test(logs(h))) return true;
    if (!state(h).startsWith('running')) throw new Error(`container ${state(h)}:\n${logs(h)}`);
    return false;
  });
  const pid = podman(['inspect', '--format', '{{.State.Pid}}', h.name]).stdout.trim();
  assert.match(fs.readFileSync(`/proc/${pid}/attr/current`, 'utf8'), /^kubeletplugin \(enforce\)/);
  h.kubelet = new KubeletSim({ registryDir: h.registry }).start();
  await h.kubelet.waitForDriver(DRIVER, 15000);
  assert.doesNotMatch(logs(h), /sandbox: .*(Permission denied|Operation not permitted)/, 'no mount of the sandbox refused');
});
