'use strict';
// A device driver's privileged pod (deploy/components/device-driver) in a
// real container runtime, and the red team's main probes from inside the
// nodeserver there: privileged removes the runtime's seccomp profile and
// capability bounds and gives the container every host device, and the
// library's own sandbox of the hooks must still hold.
//
// The image is tools/image.sh's with another driver than the example:
// the red-team driver (tests/e2e/bin/kp_redteam.c, whose prepare hook
// plays a fully compromised nodeserver: each claim names a probe and
// fails with "PROBE <probe>: DENIED|SUCCEEDED|ERROR: ...") as
// /usr/local/bin/kp_redteam. The pod shape is rendered by kustomize from
// the base with components/device-driver (the same volumes at the same
// paths, the device nodes it names, privileged, a read-only root, /tmp
// in memory) and run with podman --privileged, in-cluster credentials at
// the service-account path and the host's network for the API-server
// emulator; where the kernel has AppArmor, also under
// deploy/apparmor/kubeletplugin (components/apparmor), else it says so.
//
// The driver runs with kp_policy_main_confine (--main-confine): its
// process is confined by its own filter, the runtime's being none.
//
// Probes (redteam.test.js has them all, outside a container): the
// supervisor's and the publisher's /proc (mem, environ, root: the token),
// ptrace, process_vm_readv, kill, tgkill, setns, mount, unshare(NEWUSER),
// chroot, setuid(0), init_module, bpf, a TCP socket, the service-account
// directory, host device nodes (/dev/kmsg, /dev/loop0, /dev/loop-control,
// /dev/mem and a disk where the host has them), and a file written into
// the CDI directory directly. Every one must be DENIED (an errno) or get
// the nodeserver killed by its seccomp filter; after each, a normal
// NodePrepareResources must succeed.
//
// Skips with the reason: not root, no podman, no kustomize v5, no OCI
// runtime that starts a privileged container here.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID, randomBytes } = require('node:crypto');
const { ROOT, BUILD, REDTEAM, makeRoot, TestDriver, roles, until, procStatus } = require('./lib/plugin');
const { KubeletSim } = require(path.join(ROOT, 'tests', 'kubelet-sim'));
const { startEmulator } = require(path.join(ROOT, 'tests', 'apiserver-emu'));
const { podman, ulimits, loadAppArmor } = require('./lib/container');
const { sendProbe, preparesAgain } = require('./lib/redteam');

const DEPLOY = path.join(ROOT, 'deploy');
const IMAGE = 'localhost/kubeletplugin/kp_redteam:test';
const DRIVER = 'test.example.com';
const NODE = 'node-1';
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const KILLS_PER_RUN = 4;	// the restart backoff doubles per kill: recycle

function kustomize() {
  for (const c of [process.env.KP_KUBECTL, path.join(ROOT, '.cache', 'kubectl', 'kubectl'), 'kubectl'].filter(Boolean)) {
    const r = spawnSync(c, ['kustomize', path.join(DEPLOY, 'examples', 'pci-driver')], { encoding: 'utf8' });
    if (r.status === 0) return c;
  }
  return null;
}

function probe() {
  if (process.getuid() !== 0) return { skip: 'needs root (rootful podman: a privileged container)' };
  if (spawnSync('podman', ['--version']).error) return { skip: 'podman is not installed (tools/deps.sh installs it)' };
  const kubectl = kustomize();
  if (!kubectl) return { skip: 'no kubectl with kustomize v5 (tools/kubectl.sh) to render the pod shape' };
  const b = spawnSync(path.join(ROOT, 'tools', 'image.sh'), ['--build', BUILD, '--driver', REDTEAM,
    '--name', 'kp_redteam', '--image', IMAGE], { encoding: 'utf8' });
  if (b.status !== 0) return { fail: `tools/image.sh --driver ${REDTEAM}: ${b.stderr}` };
  const tried = [];
  for (const rt of ['crun', 'runc']) {
    const r = podman(['--runtime', rt, 'run', '--rm', '--privileged', ...ulimits(), '--network', 'none', '--entrypoint',
      '/usr/local/bin/kubeletplugin-probe', IMAGE, '--help']);
    if (r.status === 0) return { runtime: rt, kubectl, tried, built: b.stdout.trim() };
    tried.push(`${rt}: ${(r.stderr || String(r.error)).trim().split('\n').pop()}`);
  }
  return { skip: `no OCI runtime starts a privileged container here: ${tried.join('; ')}` };
}
const P = probe();
if (P.fail) throw new Error(P.fail);
const opts = P.skip ? { skip: P.skip } : {};
if (P.skip) process.stderr.write(`device-pod.test.js: skipped: ${P.skip}\n`);

// The DaemonSet of an overlay with components/device-driver whose
// kubelet root and CDI directory are the test's.
function renderPod(dir, kubeletDir, cdiDir) {
  const rel = (p) => path.relative(dir, path.join(DEPLOY, p));
  fs.writeFileSync(path.join(dir, 'kustomization.yaml'), `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: acme-loop
resources: [${rel('base')}]
components: [${rel('components/device-driver')}]
configMapGenerator:
- name: kubeletplugin-driver
  behavior: merge
  literals: [driverName=${DRIVER}, name=loop-driver, kubeletDir=${kubeletDir}, cdiDir=${cdiDir}]
transformers: [${rel('names')}]
`);
  const r = spawnSync(P.kubectl, ['kustomize', dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = spawnSync('/usr/bin/python3', ['-c',
    'import json, sys, yaml\nprint(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d]))'], { input: r.stdout });
  return JSON.parse(out.stdout).find((d) => d.kind === 'DaemonSet');
}

// A host device node to try, where the host has it.
function hostDevices() {
  const out = { kmsg: '/dev/kmsg', loop0: '/dev/loop0', loopctl: '/dev/loop-control', devmem: '/dev/mem' };
  for (const l of fs.readFileSync('/proc/partitions', 'utf8').split('\n').slice(2)) {
    const name = l.trim().split(/\s+/)[3];
    if (name && !/^loop/.test(name) && fs.existsSync(`/dev/${name}`)) { out.disk = `/dev/${name}`; break; }
  }
  for (const [k, p] of Object.entries(out)) if (!fs.existsSync(p)) delete out[k];
  return out;
}

// The pod: a kubelet-like root, the emulator, the container.
class Pod {
  constructor(t) {
    this.t = t;
    this.kills = 0;
    this.seq = 0;
  }

  async init() {
    const root = this.root = makeRoot(DRIVER);
    const d = (p) => path.join(root.dir, p);
    this.cdiDir = d('cdi');
    this.sa = d('sa');
    this.state = d('state');
    for (const x of [this.cdiDir, this.sa, this.state]) fs.mkdirSync(x, { recursive: true });
    this.token = `dp${randomBytes(16).toString('hex')}`;
    this.emu = await startEmulator({
      versions: ['v1'], nodes: [NODE], tokenFile: path.join(this.sa, 'token'), dir: d('pki'),
      tokens: [{ token: this.token, user: 'system:serviceaccount:acme-loop:loop-driver', groups: ['system:serviceaccounts'] }],
    });
    fs.writeFileSync(path.join(this.sa, 'token'), this.token, { mode: 0o644 });
    fs.copyFileSync(this.emu.caFile, path.join(this.sa, 'ca.crt'));
    fs.writeFileSync(path.join(this.sa, 'namespace'), 'acme-loop');
    // Another driver's CDI spec, root-owned 0644, in the CDI directory.
    this.otherSpec = path.join(this.cdiDir, 'other.example.com_x.json');
    fs.writeFileSync(this.otherSpec, '{}\n', { mode: 0o644 });
    this.devices = hostDevices();
    const tg = { ...this.devices, rootdir: this.cdiDir, rootfile: this.otherSpec, satoken: `${SA_DIR}/token` };
    this.targets = d('targets');
    fs.writeFileSync(this.targets, Object.entries(tg).map(([k, v]) => `${k} ${v}\n`).join(''));

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-devpod-'));
    this.t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    this.ds = renderPod(dir, root.dir, this.cdiDir);
    this.sim = new KubeletSim({ registryDir: root.registry, retryInitialMs: 100 }).start();
    this.t.after(() => this.cleanup());
    await this.start();
  }

  // podman run of the rendered pod's container, as TestDriver's binary.
  runArgs() {
    const pod = this.ds.spec.template.spec;
    const c = pod.containers[0];
    const sc = c.securityContext;
    assert.equal(sc.privileged, true, 'the device-driver pod shape');
    const vols = [];
    for (const m of c.volumeMounts) {
      const v = pod.volumes.find((x) => x.name === m.name);
      if (v.emptyDir) vols.push('--tmpfs', `${m.mountPath}:rw,size=1m`);
      // The state directory /var/lib/<driver>: a directory of the test's.
      else if (v.name === 'state') vols.push('-v', `${this.state}:${m.mountPath}`);
      else vols.push('-v', `${v.hostPath.path}:${m.mountPath}`);
    }
    this.name = `kp-devpod-${process.pid}-${randomBytes(3).toString('hex')}`;
    return ['--runtime', P.runtime, 'run', '-i', '--rm', '--name', this.name, ...ulimits(),
      '--network', 'host', '--privileged', ...(sc.readOnlyRootFilesystem ? ['--read-only', '--read-only-tmpfs=false'] : []),
      ...(this.aa ? this.aa : []), ...vols,
      '-v', `${this.sa}:${SA_DIR}:ro`, '-v', `${this.targets}:${this.targets}:ro`,
      '-e', 'KUBERNETES_SERVICE_HOST=127.0.0.1', '-e', `KUBERNETES_SERVICE_PORT=${this.emu.port}`,
      '-e', `NODE_NAME=${NODE}`, IMAGE];
  }

  async start() {
    const registered = this.sim.waitFor('registered', (i) => i.name === DRIVER, 30000);
    // kp_policy_main_confine, as docs/deploy.md recommends with the
    // component: the driver process loads the pod's profile itself.
    this.drv = new TestDriver(this.root, ['--in-cluster', '--node-name', NODE, '--redteam-targets', this.targets, '--main-confine'],
      { binary: 'podman', prefixArgs: this.runArgs() });
    await this.drv.ready();
    await registered;
    this.hostPid = Number(podman(['inspect', '--format', '{{.State.Pid}}', this.name]).stdout.trim());
    await until(() => this.pids(), 15000);
    this.kills = 0;
  }

  async recycle() {
    this.drv.kill('SIGTERM');
    podman(['rm', '-f', '-t', '2', this.name]);
    await this.drv.exited;
    await this.start();
  }

  // Host pids of the roles, when all are up.
  pids() {
    const r = roles(this.hostPid);
    return ['supervisor', 'nodeserver', 'registrar', 'publisher'].every((k) => r[k]) ? r : null;
  }

  // A role's pid as the container (and so the nodeserver) sees it.
  async nsPid(role) {
    const host = (await until(() => this.pids(), 15000))[role];
    const ns = procStatus(host).NSpid.split(/\s+/);
    return Number(ns[ns.length - 1]);
  }

  claim(name) {
    const c = { namespace: 'default', name, uid: randomUUID() };
    this.emu.addClaim({ ...c, allocation: { results: [{ request: 'req-0', driver: DRIVER, pool: NODE, device: 'dev-0' }] } });
    return c;
  }

  async probe(name) {
    const out = await sendProbe(this.drv, this.root.draSock, this.claim(name));
    if (out.broke) this.kills++;
    return out;
  }

  async serves(after) {
    const { ok, last } = await preparesAgain(this.sim, DRIVER, this.claim(`normal-${++this.seq}`), 20000);
    assert.ok(ok, `after ${after}: a normal NodePrepareResources did not succeed within 20 s (${last && last.message})`);
    if (this.kills >= KILLS_PER_RUN) await this.recycle();
  }

  async cleanup() {
    if (this.sim) await this.sim.stop();
    if (this.drv) {
      this.drv.kill();
      podman(['rm', '-f', '-t', '2', this.name]);
      await this.drv.exited;
    }
    if (this.emu) await this.emu.stop();
    this.root.cleanup();
  }
}

test('a device driver\'s privileged pod: the hooks\' sandbox holds against the red team\'s probes', opts, async (t) => {
  t.diagnostic(`runtime ${P.runtime}; ${P.built}`);
  const img = podman(['image', 'inspect', '--format', '{{json .Config.Entrypoint}}', IMAGE]);
  assert.deepEqual(JSON.parse(img.stdout), ['/usr/local/bin/kp_redteam'], 'image.sh made the red-team driver the entrypoint');
  const pod = new Pod(t);
  const aa = loadAppArmor();
  if (aa.skip) t.diagnostic(`AppArmor: ${aa.skip}`);
  else {
    pod.aa = aa.opts;
    t.diagnostic('AppArmor: the pod runs under deploy/apparmor/kubeletplugin');
  }
  await pod.init();
  t.diagnostic(`devices to try: ${Object.values(pod.devices).join(', ')}`);

  // The pod is what the component says: no runtime seccomp filter, every
  // capability; the nodeserver is confined all the same, and so is the
  // driver process (kp_policy_main_confine): each of its threads runs
  // one filter, its own, none of the runtime's.
  const drvSt = procStatus(pod.hostPid);
  for (const tid of fs.readdirSync(`/proc/${pod.hostPid}/task`)) {
    const st = procStatus(`${pod.hostPid}/task/${tid}`);
    assert.equal(st.Seccomp, '2', `driver thread ${tid}: kp_policy_main_confine's filter`);
    assert.equal(st.Seccomp_filters, '1', `driver thread ${tid}: privileged, the runtime loaded no filter; one is the driver's own`);
  }
  await pod.drv.stderrMatch(/sandbox: driver process, seccomp enforce on every thread/);
  const full = BigInt(`0x${fs.readFileSync('/proc/self/status', 'utf8').match(/^CapBnd:\s+(\w+)/m)[1]}`);
  assert.equal(BigInt(`0x${drvSt.CapBnd}`), full, 'privileged: every capability');
  const ns = procStatus(pod.pids().nodeserver);
  assert.equal(ns.Seccomp, '2', 'the nodeserver runs under its own filter');
  assert.equal(ns.NoNewPrivs, '1');
  assert.equal(BigInt(`0x${ns.CapEff}`), 0n, 'the nodeserver has no capability');
  assert.notEqual(ns.Uid.split(/\s+/)[0], '0', 'the nodeserver runs under a uid of its own');
  if (pod.aa) assert.match(fs.readFileSync(`/proc/${pod.pids().nodeserver}/attr/current`, 'utf8'), /^kubeletplugin \(enforce\)/);
  await pod.serves('the start');

  const sup = () => pod.nsPid('supervisor');
  const pub = () => pod.nsPid('publisher');
  const probes = [
    ['procmem: the supervisor\'s memory', async () => `procmem-${await sup()}`],
    ['procenv: the supervisor\'s environment', async () => `procenv-${await sup()}`],
    ['procroot: the token through /proc/<publisher>/root', async () => `procroot-${await pub()}-satoken`],
    ['procmem: the publisher\'s memory', async () => `procmem-${await pub()}`],
    ['ptrace(PTRACE_ATTACH, <publisher>)', async () => `ptrace-${await pub()}`],
    ['process_vm_readv(<publisher>)', async () => `vmreadv-${await pub()}`],
    ['kill(<supervisor>, SIGKILL)', async () => `kill-${await sup()}-9`],
    ['tgkill(<publisher>)', async () => `tgkill-${await pub()}`],
    ['setns(<publisher mnt ns>)', async () => `setns-${await pub()}`],
    ['mount', 'mount'],
    ['unshare(CLONE_NEWUSER)', 'unshare'],
    ['chroot', 'chroot'],
    ['setuid(0)', 'setuid'],
    ['init_module', 'initmodule'],
    ['bpf', 'bpf'],
    ['socket(AF_INET) to the API server', () => `inetsocket-${pod.emu.port}`],
    ['the service-account directory', 'tokendir'],
    ['a spec written into the CDI directory directly', 'rootcreate'],
    ['another driver\'s CDI spec rewritten', 'rootwrite'],
    ...Object.entries(pod.devices).map(([k, p]) => [`open ${p}`, `devopen-${k}`]),
  ];
  const failed = [];
  for (const [label, name] of probes) {
    const o = await pod.probe(typeof name === 'function' ? await name() : name);
    t.diagnostic(`${label}: ${o.verdict.toUpperCase()}: ${o.text}`);
    if (o.verdict !== 'denied' && o.verdict !== 'killed') failed.push(`${label}: ${o.verdict}: ${o.text}`);
    await pod.serves(o.name);
  }
  assert.equal(fs.existsSync(path.join(pod.cdiDir, 'rt-created')), false, 'no file appeared in the CDI directory');
  assert.equal(fs.readFileSync(pod.otherSpec, 'utf8'), '{}\n', 'the other driver\'s spec is intact');
  assert.deepEqual(failed, [], 'every probe denied or the nodeserver killed');
});
