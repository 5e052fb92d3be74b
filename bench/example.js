'use strict';
// bench/example.js - the "example" server of bench/run.js: the example PCI
// driver (build/examples/pci-driver) with the API-server emulator
// (tests/apiserver-emu) serving allocated ResourceClaims and its devices
// from a fake sysfs tree (tests/e2e/lib/fake-sysfs.js), and the claim
// look-up figures (lookupBench).
//
// Its request pools name claims the emulator holds, allocated to devices
// of the fake tree. start() prepares every one of them once (a look-up
// and the prepare hook each), so the measured calls of run.js's loops are
// prepares of claims the driver knows: the library's journal answers them
// (no look-up, no hook; the CDI spec's existence is checked). That is
// the "example driver on an already-known device" row.
//
// lookupBench measures what a new claim costs, with fresh claim UIDs on
// every call (a UID prepared before would be answered by the journal):
// one claim per call and 100 per call, both against the API GET alone
// (curl, i.e. libcurl as the publisher, one keep-alive connection with
// TCP_NODELAY), and with a second instance at a low configured QPS, paced
// look-ups below and above it (is there client-side throttling below it).

const { spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const { proto } = require('../tests/kubelet-sim');
const { newClient, rawUnary } = require('../tests/kubelet-sim/grpc-util');
const { startEmulator, kubeconfig } = require('../tests/apiserver-emu');
const { fakeSysfs } = require('../tests/e2e/lib/fake-sysfs');

const DRIVER = 'pci.example.com';
const NODE = 'node-1';
const NDEV = 16;
const GETINFO = '/pluginregistration.Registration/GetInfo';
const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const UNPREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources';
const BENCH_QPS = 1000;		// kp_kube_api_qps's maximum
const BENCH_BURST = 10000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const timeout = (ms, v) => new Promise((r) => setTimeout(r, ms, v).unref());
const devName = (i) => `pci-0000-00-${(i % NDEV).toString(16).padStart(2, '0')}-0`;
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))] : null;
};

function encode(type, claims) {
  return proto.encode(proto.typeName('v1', type), { claims: claims.map(({ namespace, name, uid }) => ({ namespace, name, uid })) });
}

// Start the emulator, the fake sysfs and the kubeconfig in dir; the
// publisher and the nodeserver run under their own uids and read there.
async function environment(dir) {
  const { giveToNodeserver } = require('../tests/e2e/lib/plugin');
  fs.chmodSync(path.dirname(dir), 0o755);
  fs.chmodSync(dir, 0o755);
  const devices = Array.from({ length: NDEV }, (_, i) => ({
    addr: `0000:00:${i.toString(16).padStart(2, '0')}.0`, numa: i % 2, driver: i % 2 ? 'vfio-pci' : 'e1000e', iommu: i, bars: [[0x1000000 * (i + 1), 4096]],
  }));
  const sys = fakeSysfs(dir, devices);
  const emu = await startEmulator({ versions: ['v1', 'v1beta1'], nodes: [NODE], tokenFile: path.join(dir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(dir, 'ca.crt'));
  const kc = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const cdi = path.join(dir, 'cdi');
  const state = path.join(dir, 'state');
  giveToNodeserver(cdi, state);
  let seq = 0;
  // n fresh allocated claims in the emulator.
  const claims = (n, prefix) => Array.from({ length: n }, () => {
    const c = { namespace: 'default', name: `${prefix}-${seq}`, uid: randomUUID() };
    emu.addClaim({ ...c, allocation: { results: [{ request: 'pci', driver: DRIVER, pool: NODE, device: devName(seq++) }] } });
    return c;
  });
  return { sys, emu, kc, cdi, state, claims };
}

// The example server, as a run.js Server (start, stop, cpu, files, probe).
function exampleServer(Server, dir, o, tools, { qps = BENCH_QPS, burst = BENCH_BURST, name = 'example' } = {}) {
  const binary = path.join(tools.BUILD, 'examples', 'pci-driver');
  class Example extends Server {
    async start() {
      if (!fs.existsSync(this.binary)) throw new Error(`${this.binary} is missing: build first (make)`);
      this.env = await environment(this.dir);
      const e = this.env;
      this.args = ['--driver-name', DRIVER, '--node-name', NODE, '--registrar-socket', this.regSock,
        '--plugin-socket', this.draSock, '--kubeconfig', e.kc, '--cdi-dir', e.cdi, '--state-dir', e.state,
        '--sysfs-root', e.sys, '--kube-api-qps', String(qps), '--kube-api-burst', String(burst)];
      // The load clients plus the sequential ones (as run.js's kp).
      if (o !== null) this.args.push('--max-connections', String(Math.min(1024, Math.max(...o.concurrency) + 8)));
      const errFile = this.logFile || path.join(this.dir, 'stderr');
      const err = fs.openSync(errFile, 'w');
      const t0 = process.hrtime.bigint();
      this.proc = spawn(this.binary, this.args, { stdio: ['ignore', 'ignore', err] });
      fs.closeSync(err);
      this.exited = new Promise((r) => this.proc.on('close', (code, sig) => r({ code, sig })));
      this.log = () => fs.readFileSync(errFile, 'utf8').split('\n').slice(-30).join('\n');
      for (;;) {
        if (/pci-driver: serving/.test(fs.readFileSync(errFile, 'utf8'))) break;
        if (this.proc.exitCode !== null || Number(process.hrtime.bigint() - t0) > 20e9) throw new Error(`${this.name}: did not start:\n${this.log()}`);
        await sleep(5);
      }
      this.tReady = Number(process.hrtime.bigint() - t0) / 1e6;
      const reg = newClient(this.regSock);
      for (;;) {
        const r = await rawUnary(reg, GETINFO, Buffer.alloc(0), 1000);
        if (r.code === 0) break;
        if (Number(process.hrtime.bigint() - t0) > 20e9) throw new Error(`${this.name}: no GetInfo answer: ${r.details}`);
        await sleep(2);
      }
      reg.close();
      this.tRegistrable = Number(process.hrtime.bigint() - t0) / 1e6;
      if (o === null) return;
      // Pools of requests naming known claims, fewer for many claims per
      // call (the journal holds them all), each prepared once now.
      this.files = {};
      for (const n of o.claims) {
        const count = Math.max(1, Math.min(64, Math.floor(128 / n)));
        const bufs = Array.from({ length: count }, () => encode('NodePrepareResourcesRequest', e.claims(n, `known${n}`)));
        this.files[n] = tools.requestFile(this.dir, `known-${n}`, bufs);
        if (n === o.claims[0]) this.probe = bufs[0];
        await tools.loadgen(this, this.draSock, PREPARE, this.files[n], { calls: count });
      }
    }

    async stop() {
      if (this.proc && this.proc.exitCode === null) {
        this.proc.kill('SIGTERM');
        if (await Promise.race([this.exited, timeout(10000, null)]) === null) this.proc.kill('SIGKILL');
      }
      if (this.env) await this.env.emu.stop();
    }
  }
  const s = new Example(name, binary, () => [], dir);
  return s;
}

// Latencies of n keep-alive GETs of the claims, in ms, with curl (libcurl,
// as the publisher; TCP_NODELAY is curl's default), the first 3 (the
// connection's set-up) left out.
function curlGets(env, claims) {
  const token = fs.readFileSync(path.join(path.dirname(env.kc), 'token'), 'utf8').trim();
  const args = ['-s', '--cacert', path.join(path.dirname(env.kc), 'ca.crt'), '-H', `Authorization: Bearer ${token}`,
    '-w', '%{http_code} %{time_total}\\n'];
  for (const c of claims) args.push('-o', '/dev/null', `${env.emu.url}/apis/resource.k8s.io/v1/namespaces/${c.namespace}/resourceclaims/${c.name}`);
  return new Promise((resolve, reject) => {
    const p = spawn('curl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('error', reject);
    p.on('close', (code) => {
      const lines = out.trim().split('\n').map((l) => l.split(' '));
      if (code !== 0 || lines.some(([st]) => st !== '200')) {
        reject(new Error(`curl: exit ${code}: ${out.slice(0, 200)}`));
        return;
      }
      resolve(lines.slice(3).map(([, t]) => Number(t) * 1000));
    });
  });
}

// Unprepare the claims again (so the journal stays its size).
async function unprepare(tools, srv, groups) {
  const file = tools.requestFile(srv.dir, 'unprepare', groups.map((g) => encode('NodeUnprepareResourcesRequest', g)));
  await tools.loadgen(srv, srv.draSock, UNPREPARE, file, { calls: groups.length });
}

// Paced look-ups, one fresh claim per call, at rate calls/s for secs:
// latencies in ms (grpc-js client, so some 100 us of it are the client's).
async function paced(srv, rate, count) {
  const cl = newClient(srv.draSock);
  const claims = srv.env.claims(count, `paced${rate}`);
  const lat = [];
  const t0 = Date.now();
  const calls = claims.map(async (c, i) => {
    const due = t0 + (i * 1000) / rate - Date.now();
    if (due > 0) await sleep(due);
    const s = process.hrtime.bigint();
    const r = await rawUnary(cl, PREPARE, encode('NodePrepareResourcesRequest', [c]), 30000);
    if (r.code !== 0) throw new Error(`paced prepare: code ${r.code}: ${r.details}`);
    lat.push(Number(process.hrtime.bigint() - s) / 1e6);
  });
  await Promise.all(calls);
  cl.close();
  return lat;
}

// The look-up figures against srv (an exampleServer at BENCH_QPS); put(k, v).
// when: 'fresh' (its first nodeserver: everything) or 'restarted' (after
// run.js's recovery rounds killed it: the 1-claim look-up again).
async function lookupBench(o, srv, tools, Server, tmp, put, when = 'fresh') {
  const e = srv.env;
  if (when === 'restarted') {
    for (let round = 0; round < o.rounds; round++) {
      const ones = Array.from({ length: 150 }, () => e.claims(1, 'again'));
      const f = tools.requestFile(srv.dir, 'lookup-r', ones.map((g) => encode('NodePrepareResourcesRequest', g)));
      const r = await tools.loadgen(srv, srv.draSock, PREPARE, f, { calls: ones.length });
      put('look1r.p50', r.p50);
      put('look1r.cpu', r.cpuPerCall);
      await unprepare(tools, srv, ones);
    }
    return;
  }
  for (let round = 0; round < o.rounds; round++) {
    // One fresh claim per call, then 100 per call.
    const ones = Array.from({ length: 150 }, () => e.claims(1, 'look'));
    const f1 = tools.requestFile(srv.dir, 'lookup-1', ones.map((g) => encode('NodePrepareResourcesRequest', g)));
    const r1 = await tools.loadgen(srv, srv.draSock, PREPARE, f1, { calls: ones.length });
    put('look1.p50', r1.p50);
    put('look1.p99', r1.p99);
    put('look1.cpu', r1.cpuPerCall);
    const gets = await curlGets(e, ones.flat());
    put('get.p50', pct(gets, 0.5));
    put('get.p99', pct(gets, 0.99));
    await unprepare(tools, srv, ones);
    const hundreds = Array.from({ length: 12 }, () => e.claims(100, 'look100'));
    const f100 = tools.requestFile(srv.dir, 'lookup-100', hundreds.map((g) => encode('NodePrepareResourcesRequest', g)));
    const r100 = await tools.loadgen(srv, srv.draSock, PREPARE, f100, { calls: hundreds.length });
    put('look100.p50', r100.p50);
    put('look100.cpu', r100.cpuPerCall);
    await unprepare(tools, srv, hundreds);
  }
  // Throttling: an instance at 50 QPS, burst 10; look-ups paced at 40/s
  // (below: no call should wait for a token) and at 100/s (above: the
  // bucket empties after the burst and calls wait).
  const ctl = await paced(srv, 40, 120);	// the control, at 1000 QPS
  put('qps.ctl.p50', pct(ctl, 0.5));
  put('qps.ctl.p99', pct(ctl, 0.99));
  const dir = path.join(tmp, 'example-qps');
  fs.mkdirSync(dir);
  const q = exampleServer(Server, dir, null, tools, { qps: 50, burst: 10, name: 'example-qps' });
  try {
    await q.start();
    await paced(q, 10, 5);	// connections, TLS, the first scan
    const below = await paced(q, 40, 120);
    put('qps.below.p50', pct(below, 0.5));
    put('qps.below.p99', pct(below, 0.99));
    put('qps.below.max', Math.max(...below));
    const above = await paced(q, 100, 100);
    put('qps.above.p50', pct(above, 0.5));
    put('qps.above.max', Math.max(...above));
  } finally {
    await q.stop();
  }
}

// Report rows (run.js's row(label, key, unit, get)), for the example server.
function lookupRows(row, get) {
  row('example: look-up prepare, 1 new claim: p50', null, 'ms', get('look1.p50'));
  row('example: look-up prepare, 1 new claim: p99', null, 'ms', get('look1.p99'));
  row('example: API GET alone (curl, keep-alive): p50', null, 'ms', get('get.p50'));
  row('example: API GET alone: p99', null, 'ms', get('get.p99'));
  row('example: look-up p50 minus GET p50', null, 'ms', (s) => {
    const a = get('look1.p50')(s);
    const b = get('get.p50')(s);
    return a === null || b === null ? null : a - b;
  });
  row('example: look-up prepare, 1 new claim: server CPU/call', null, 'us', get('look1.cpu'));
  row('example: look-up prepare, 100 new claims: p50', null, 'ms', get('look100.p50'));
  row('example: 100 claims / 1 claim, p50', null, '', (s) => {
    const a = get('look100.p50')(s);
    const b = get('look1.p50')(s);
    return a === null || b === null ? null : Number((a / b).toFixed(2));
  });
  row('example: look-up prepare, 100 new claims: server CPU/call', null, 'us', get('look100.cpu'));
  row('example: look-up prepare, 1 new claim, nodeserver restarted: p50', null, 'ms', get('look1r.p50'));
  row('example: the same, server CPU/call', null, 'us', get('look1r.cpu'));
  row('example@1000 QPS: paced at 40/s: p50', null, 'ms', get('qps.ctl.p50'));
  row('example@1000 QPS: paced at 40/s: p99', null, 'ms', get('qps.ctl.p99'));
  row('example@50 QPS: paced at 40/s: p50', null, 'ms', get('qps.below.p50'));
  row('example@50 QPS: paced at 40/s: p99', null, 'ms', get('qps.below.p99'));
  row('example@50 QPS: paced at 40/s: max', null, 'ms', get('qps.below.max'));
  row('example@50 QPS: paced at 100/s: p50', null, 'ms', get('qps.above.p50'));
  row('example@50 QPS: paced at 100/s: max', null, 'ms', get('qps.above.max'));
}

module.exports = { exampleServer, lookupBench, lookupRows };
