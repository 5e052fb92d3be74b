#!/usr/bin/env node
'use strict';
// demo.js - the example driver end to end on this machine (tools/demo.sh
// runs it; `make demo` runs that). It starts the kube-apiserver emulator
// with a Node object, the example driver (build/examples/pci-driver) with
// its sockets under a temporary kubelet root, and the kubelet simulator,
// then shows: the registration, the ResourceSlices of this machine's real
// PCI devices, a ResourceClaim allocated to one of them, the
// NodePrepareResources result with its CDI spec file, the unprepare, the
// plugin's processes with their sandbox state, and a clean stop.
//
// Environment: KP_BUILD (build directory, default build), KP_DEMO_KEEP=1
// keeps the temporary directory.

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomUUID } = require('node:crypto');

const ROOT = path.resolve(__dirname, '..');
const BUILD = path.resolve(ROOT, process.env.KP_BUILD || 'build');
const DRIVER_BIN = path.join(BUILD, 'examples', 'pci-driver');
const DRIVER = 'pci.example.com';
const { KubeletSim } = require(path.join(ROOT, 'tests', 'kubelet-sim'));
// The journal as the library reads it: the schema-1 snapshot and the
// schema-2 change log beside it.
const { readJournal } = require(path.join(ROOT, 'tests', 'e2e', 'lib', 'journal'));
const { startEmulator, kubeconfig } = require(path.join(ROOT, 'tests', 'apiserver-emu'));

const isRoot = process.getuid() === 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = (s = '') => process.stdout.write(`${s}\n`);
const indent = (s, n = 2) => s.split('\n').map((l) => (l ? ' '.repeat(n) + l : l)).join('\n');
let step = 0;
const section = (title) => out(`\n== ${++step}. ${title}`);

// A column table, as kubectl prints them.
function table(rows) {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r) => r.map((c, i) => String(c).padEnd(i === r.length - 1 ? 0 : w[i] + 3)).join('')).join('\n');
}

async function until(what, fn, timeoutMs = 20000, stepMs = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(stepMs);
  }
}

// A valid node name from the host name (a DNS subdomain).
function nodeName() {
  const h = os.hostname().toLowerCase().replace(/[^a-z0-9.-]/g, '-').replace(/^[-.]+|[-.]+$/g, '');
  return /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(h) ? h : 'demo-node';
}

const CLASSES = {
  '0x00': 'unclassified', '0x01': 'storage', '0x02': 'network', '0x03': 'display', '0x04': 'multimedia',
  '0x05': 'memory', '0x06': 'bridge', '0x07': 'communication', '0x08': 'system', '0x09': 'input',
  '0x0c': 'serial bus', '0x0d': 'wireless', '0x12': 'accelerator', '0xff': 'vendor-specific',
};
const className = (c) => CLASSES[(c || '').slice(0, 4)] || 'other';

function procStatus(pid) {
  const st = {};
  for (const l of fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const i = l.indexOf(':');
    if (i > 0) st[l.slice(0, i)] = l.slice(i + 1).trim();
  }
  return st;
}
const children = (pid) => {
  try {
    return execFileSync('pgrep', ['-P', String(pid)]).toString().trim().split('\n').filter(Boolean).map(Number);
  } catch { return []; }
};
const comm = (pid) => { try { return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { return '?'; } };
const capNames = (hex) => {
  let v = BigInt(`0x${hex}`);
  let n = 0;
  for (; v > 0n; v >>= 1n) n += Number(v & 1n);
  if (n === 0) return 'none';
  if (n > 8) return `${n} (the full set of root)`;
  try {
    return execFileSync('capsh', [`--decode=${hex}`], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim().replace(/^.*=/, '');
  } catch { return `0x${hex}`; }
};

async function main() {
  if (!fs.existsSync(DRIVER_BIN)) throw new Error(`${DRIVER_BIN} is missing: run make first`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-demo-'));
  const kubeletDir = path.join(dir, 'kubelet');
  const registry = path.join(kubeletDir, 'plugins_registry');
  const pluginDir = path.join(kubeletDir, 'plugins', DRIVER);
  const cdiDir = path.join(dir, 'cdi');
  const stateDir = path.join(dir, 'state');	// the nodeserver's own
  fs.mkdirSync(registry, { recursive: true });
  fs.mkdirSync(pluginDir, { recursive: true });
  // As root the plugin's processes run as their own uids (61000 the
  // nodeserver, 61002 the publisher): the temporary tree must be open to
  // them. The CDI and plugin directories stay root's, as on a node: the
  // supervisor writes the specs and binds the sockets there without
  // CAP_DAC_OVERRIDE; the state directory is the nodeserver's (the
  // supervisor hands it over at start).
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(cdiDir, { recursive: true });
  const NODE = nodeName();
  const cleanups = [];
  const cleanup = async () => {
    for (const f of cleanups.reverse()) { try { await f(); } catch { /* best effort */ } }
    if (process.env.KP_DEMO_KEEP !== '1') fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    out(`kubeletplugin demo: driver ${DRIVER} on node ${NODE}, Linux ${os.release()}, ` +
      `${isRoot ? 'as root' : `as uid ${process.getuid()}`}`);
    out(`temporary kubelet root: ${kubeletDir}`);
    if (!isRoot) {
      out('NOTE: not running as root: the plugin runs with a reduced sandbox (no pid or mount');
      out('      namespaces, no hidden paths, no empty chroot, no uid of its own per process;');
      out('      seccomp, Landlock and NO_NEW_PRIVS still apply), and the simulated kubelet connects');
      out(`      as uid ${process.getuid()} (allowed with --allow-uid). Run as root for the full sandbox.`);
    }

    section('kube-apiserver emulator (HTTPS, bearer token) with a Node object');
    const emu = await startEmulator({ versions: ['v1', 'v1beta1'], nodes: [NODE], tokenFile: path.join(dir, 'token') });
    cleanups.push(() => emu.stop());
    fs.copyFileSync(emu.caFile, path.join(dir, 'ca.crt'));
    const kc = path.join(dir, 'kubeconfig');
    fs.writeFileSync(kc, kubeconfig({ server: emu.url }), { mode: 0o600 });
    out(`  ${emu.url}  (Kubernetes ${emu.opts ? emu.opts.kubeVersion : '1.34'}, resource.k8s.io v1 and v1beta1)`);
    out(`  node/${NODE}  uid ${emu.getNode(NODE).uid}`);

    section(`the example driver: ${DRIVER_BIN.startsWith(ROOT) ? path.relative(ROOT, DRIVER_BIN) : DRIVER_BIN}`);
    const args = ['--driver-name', DRIVER, '--node-name', NODE, '--kubelet-dir', kubeletDir,
      '--kubeconfig', kc, '--cdi-dir', cdiDir, '--state-dir', stateDir, '--rescan', '5', '-v', '1'];
    if (!isRoot) args.push('--allow-uid', String(process.getuid()));
    const found = execFileSync(DRIVER_BIN, ['--list']).toString().trim().split('\n').filter(Boolean).map(JSON.parse);
    out(`  pci-driver ${args.join(' ').replaceAll(dir, '$TMP')}`);
    const logFile = path.join(dir, 'driver.log');
    const logFd = fs.openSync(logFile, 'w');
    const drv = spawn(DRIVER_BIN, args, { stdio: ['ignore', 'ignore', logFd] });
    fs.closeSync(logFd);
    const exited = new Promise((resolve) => drv.on('exit', (code, signal) => resolve({ code, signal })));
    let running = true;
    exited.then(() => { running = false; });
    cleanups.push(async () => { if (running) { drv.kill('SIGKILL'); await exited; } });
    const log = () => fs.readFileSync(logFile, 'utf8');
    await until('the driver to serve', () => {
      if (!running) throw new Error(`the driver exited:\n${log()}`);
      return /pci-driver: serving/.test(log());
    });
    for (const l of log().split("\n").filter((x) => /^pci-driver: /.test(x))) out(`  ${l.replaceAll(dir, "$TMP")}`);
    out('  sockets:');
    out(indent(execFileSync('ls', ['-l', registry, pluginDir]).toString().trim().replaceAll(dir, '$TMP'), 4));

    section('kubelet (simulated, 1.34) registers the plugin');
    const sim = new KubeletSim({ registryDir: registry, version: '1.34' }).start();
    cleanups.push(() => sim.stop());
    const inst = await sim.waitForDriver(DRIVER, 15000);
    out(`  registered DRA driver "${inst.name}"`);
    out(`  registration socket: ${inst.socketPath.replaceAll(dir, '$TMP')}`);
    out(`  endpoint:            ${inst.endpoint.replaceAll(dir, '$TMP')}`);
    out(`  supported versions:  ${inst.supportedVersions.join(', ')}`);
    out(`  API kubelet chose:   ${inst.api} (${inst.servicePrefix}*)`);

    section(`ResourceSlices published for this machine's ${found.length} PCI device(s)`);
    const sel = `spec.driver=${DRIVER},spec.nodeName=${NODE}`;
    const slices = await until('the ResourceSlices', () => {
      const s = emu.getSlices({ fieldSelector: sel });
      const n = s.reduce((a, x) => a + (x.spec.devices || []).length, 0);
      return n === found.length && s.length > 0 ? s : null;
    });
    out('  $ kubectl get resourceslices -o wide');
    const age = (t) => `${Math.max(0, Math.round((Date.now() - Date.parse(t)) / 1000))}s`;
    out(indent(table([['NAME', 'NODE', 'DRIVER', 'POOL', 'AGE'],
      ...slices.map((s) => [s.metadata.name, s.spec.nodeName, s.spec.driver, s.spec.pool.name, age(s.metadata.creationTimestamp)])])));
    const s0 = slices[0];
    out(`\n  devices of ${s0.metadata.name} (pool ${s0.spec.pool.name}, generation ${s0.spec.pool.generation}, ` +
      `${s0.spec.pool.resourceSliceCount} slice(s) in the pool):`);
    const a = (d, k) => { const v = (d.attributes || {})[k]; return v ? String(v.string ?? v.int ?? v.bool ?? v.version) : '-'; };
    out(indent(table([['DEVICE', 'PCI ADDRESS', 'VENDOR:DEVICE', 'CLASS', 'KERNEL DRIVER', 'NUMA', 'BAR MEMORY'],
      ...s0.spec.devices.map((d) => [d.name, a(d, 'pciAddress'), `${a(d, 'vendor')}:${a(d, 'device')}`,
        `${a(d, 'class')} (${className(a(d, 'class'))})`, a(d, 'driver'), a(d, 'numaNode'),
        ((d.capacity || {}).barMemory || {}).value || '-'])])));
    const attrs = Object.keys(s0.spec.devices[0].attributes || {});
    out(`  attributes: ${attrs.join(', ')}`);

    section('a ResourceClaim allocated to one real device');
    const pick = s0.spec.devices.find((d) => a(d, 'class').startsWith('0x02') && a(d, 'driver') !== '-') ||
      s0.spec.devices.find((d) => a(d, 'driver') !== '-') || s0.spec.devices[0];
    const claim = { namespace: 'default', name: 'pci-demo', uid: randomUUID() };
    emu.addClaim({ ...claim, requests: ['nic'], allocation: { results: [{ request: 'nic', driver: DRIVER, pool: NODE, device: pick.name }] } });
    const stored = emu.getClaim('default', 'pci-demo');
    out(`  resourceclaim/${claim.name} -n ${claim.namespace}, uid ${claim.uid}`);
    out(indent(`status:\n  allocation:\n    devices:\n      results:\n${stored.status.allocation.devices.results.map((r) =>
      `      - request: ${r.request}\n        driver: ${r.driver}\n        pool: ${r.pool}\n        device: ${r.device}`).join('\n')}`, 4));
    out(`  (${pick.name} is ${a(pick, 'pciAddress')}, ${className(a(pick, 'class'))}, kernel driver ${a(pick, 'driver')})`);

    section('NodePrepareResources (the plugin looks the claim up, writes a CDI spec)');
    const res = await sim.nodePrepareResources(DRIVER, [claim]);
    const r = res.claims[claim.uid];
    if (r.error) throw new Error(`prepare failed: ${r.error}`);
    for (const d of r.devices) {
      out(`  claim ${claim.uid}: ${d.poolName || d.pool_name}/${d.deviceName || d.device_name}`);
      out(`    requests:        ${(d.requestNames || d.request_names || []).join(', ')}`);
      out(`    CDI device IDs:  ${(d.cdiDeviceIds || d.cdi_device_ids || []).join(', ')}`);
    }
    const specPath = path.join(cdiDir, `${DRIVER}_claim-${claim.uid}.json`);
    const before = fs.statSync(specPath);
    out(`  CDI spec ${specPath.replaceAll(dir, '$TMP')}:`);
    out(indent(fs.readFileSync(specPath, 'utf8').trim(), 4));
    const res2 = await sim.nodePrepareResources(DRIVER, [claim]);
    const after = fs.statSync(specPath);
    const same = JSON.stringify(res2.claims[claim.uid]) === JSON.stringify(r);
    out(`  prepared again (kubelet retries): ${same ? 'same result' : 'DIFFERENT RESULT'}, spec file ` +
      `${before.mtimeMs === after.mtimeMs && before.ino === after.ino ? 'not rewritten' : 'REWRITTEN'}`);
    if (!same) throw new Error('a repeated prepare changed the result');
    const jfile = path.join(stateDir, 'kubeletplugin-journal.json');
    const cp = { ...readJournal(stateDir).snapshot, claims: readJournal(stateDir).claims };
    out(`  journal ${jfile.replaceAll(dir, '$TMP')}: schema ${cp.schema}, ` +
      `${Object.keys(cp.claims).length} prepared claim(s), boot ${cp.bootId}, ${cp.checksum}`);

    section('NodeUnprepareResources');
    const un = await sim.nodeUnprepareResources(DRIVER, [claim]);
    const ue = un.claims[claim.uid];
    out(`  claim ${claim.uid}: ${ue && ue.error ? `error: ${ue.error}` : 'unprepared'}`);
    out(`  CDI spec file: ${fs.existsSync(specPath) ? 'STILL THERE' : 'removed'}`);
    const cp2 = readJournal(stateDir);
    out(`  journal: ${Object.keys(cp2.claims).length} prepared claim(s)`);
    const un2 = await sim.nodeUnprepareResources(DRIVER, [{ namespace: 'default', name: 'never-prepared', uid: randomUUID() }]);
    const ue2 = Object.values(un2.claims)[0];
    out(`  unprepare of a claim never prepared: ${ue2 && ue2.error ? `error: ${ue2.error}` : 'success (not an error)'}`);

    section('processes of the plugin and their sandbox');
    const SECCOMP = { 0: 'disabled', 1: 'strict', 2: 'filter' };
    const rows = [['ROLE', 'PID', 'PPID', 'UID', 'CAPABILITIES (effective)', 'NO_NEW_PRIVS', 'SECCOMP']];
    const procs = [drv.pid];
    for (const s of children(drv.pid)) { procs.push(s); procs.push(...children(s)); }
    for (const p of procs) {
      const st = procStatus(p);
      const name = comm(p);
      const role = p === drv.pid ? 'driver' : name.replace(/^kp-/, '');
      rows.push([role, p, st.PPid, st.Uid.split(/\s+/)[0], capNames(st.CapEff), st.NoNewPrivs === '1' ? 'yes' : 'no',
        SECCOMP[st.Seccomp] || st.Seccomp]);
    }
    out(indent(table(rows)));
    if (!isRoot) out('  (not root: reduced sandbox, see the note at the top)');

    section('stopping (SIGTERM to the driver)');
    drv.kill('SIGTERM');
    const ex = await Promise.race([exited, sleep(20000).then(() => null)]);
    if (!ex) throw new Error('the driver did not stop within 20 s');
    out(`  driver exited with status ${ex.code}${ex.signal ? ` (signal ${ex.signal})` : ''}`);
    const gone = !fs.existsSync(inst.socketPath) && !fs.existsSync(path.join(pluginDir, 'dra.sock'));
    out(`  socket files ${gone ? 'removed' : 'STILL THERE'}`);
    out(`  ResourceSlices left in the API server: ${emu.getSlices({ fieldSelector: sel }).length} (kp_stop never deletes them)`);
    const lines = log().split('\n').filter((l) => /^pci-driver/.test(l));
    out('  driver log (its own lines; the library logs in klog format around them):');
    out(indent(lines.join('\n').replaceAll(dir, '$TMP'), 4));
    if (ex.code !== 0 || !gone) throw new Error(`unclean stop:\n${log()}`);
    out('\ndemo finished: OK');
  } finally {
    await cleanup();
  }
}

const watchdog = setTimeout(() => {
  process.stderr.write('demo: no progress for 120 s, giving up\n');
  process.exit(1);
}, 120000);
watchdog.unref();

main().then(() => process.exit(0), (err) => {
  process.stderr.write(`demo failed: ${err && err.stack || err}\n`);
  process.exit(1);
});
