'use strict';
// bench/example-prof.js - the example driver's nodeserver under strace
// and perf, with many claims in the library's journal (bench/example.js
// measures times, this counts syscalls and samples). Starts the example
// server of bench/example.js (its emulator, fake sysfs, tmpfs CDI
// directory, the journal's state directory on /tmp), prepares N claims
// (paced within the CDI budget), then:
//   strace -c -f on the nodeserver over 30 prepares of a new claim each
//   (strace-new.txt) and 30 of a known claim (strace-known.txt);
//   perf record -g over 40 prepares of a new claim (perf.data).
// Run as root, with strace and perf installed:
//   node bench/example-prof.js BUILD OUTDIR [N (default 200)]
// e.g. once for build/ and once for a build of main, then
//   perf report -i OUTDIR/perf.data --sort dso --stdio -g none
const path = require('node:path');
const fs = require('node:fs');
const os = require('node:os');
const { spawn } = require('node:child_process');
const { exampleServer } = require('./example');
const { proto } = require('../tests/kubelet-sim');
const { newClient, rawUnary } = require('../tests/kubelet-sim/grpc-util');

const PREPARE = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources';
const M = 30;		// prepares under strace, each kind
const PERF_CALLS = 40;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const encode = (cs) => proto.encode(proto.typeName('v1', 'NodePrepareResourcesRequest'),
  { claims: cs.map(({ namespace, name, uid }) => ({ namespace, name, uid })) });

// What bench/example.js needs of run.js's Server.
class Server {
  constructor(name, binary, args, dir) {
    Object.assign(this, { name, binary, dir, draSock: path.join(dir, 'dra.sock'), regSock: path.join(dir, 'reg.sock') });
    this.args = args(this);
  }

  // As run.js's: the first GetInfo answered.
  async awaitRegistrable() {
    const reg = newClient(this.regSock);
    while ((await rawUnary(reg, '/pluginregistration.Registration/GetInfo', Buffer.alloc(0), 1000)).code !== 0) await sleep(2);
    reg.close();
  }
}

// The pid of the process named comm under pid.
function descendant(pid, comm) {
  const parent = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      parent.set(Number(d), [Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]), name]);
    } catch { /* gone */ }
  }
  for (const [p, [, name]] of parent) {
    if (name !== comm) continue;
    for (let q = p; q > 1; q = parent.has(q) ? parent.get(q)[0] : 0) if (q === pid) return p;
  }
  return null;
}

// The calls of the claim groups, gap ms apart; every claim must succeed.
async function prep(cl, groups, gap) {
  for (const g of groups) {
    const r = await rawUnary(cl, PREPARE, encode(g), 30000);
    if (r.code !== 0) throw new Error(r.details);
    const m = proto.decode(proto.typeName('v1', 'NodePrepareResourcesResponse'), r.buffer);
    const errs = Object.values(m.claims || {}).filter((c) => c.error);
    if (errs.length) throw new Error(errs[0].error);
    await sleep(gap);
  }
}
// cmd (strace or perf attached to a pid) around fn().
async function traced(cmd, args, fn) {
  const p = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  await sleep(1500);
  await fn();
  p.kill('SIGINT');
  await new Promise((r) => p.on('close', r));
}
(async () => {
  const [build, out, nStr] = process.argv.slice(2);
  if (!build || !out) {
    console.error('usage: node bench/example-prof.js BUILD OUTDIR [N]');
    process.exit(2);
  }
  const N = Number(nStr || 200);
  fs.mkdirSync(out, { recursive: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-jprof-'));
  const s = exampleServer(Server, dir, { concurrency: [8] }, { BUILD: build }, { name: 'ex' });
  s.logFile = path.join(out, 'stderr');
  await s.start();
  try {
    const cl = newClient(s.draSock);
    const e = s.env;
    const base = e.claims(N, 'base');
    for (let i = 0; i < base.length; i += 10) await prep(cl, [base.slice(i, i + 10)], 250);
    await sleep(2500);
    const ns = descendant(s.proc.pid, 'kp-nodeserver');
    const jf = path.join(e.state, 'kubeletplugin-journal.json');
    console.log(`nodeserver ${ns}, journal ${fs.statSync(jf).size} bytes, ${N + 20} claims`);
    await traced('strace', ['-c', '-f', '-o', path.join(out, 'strace-new.txt'), '-p', String(ns)], () => prep(cl, e.claims(M, 'new').map((c) => [c]), 25));
    await sleep(2500);
    await traced('strace', ['-c', '-f', '-o', path.join(out, 'strace-known.txt'), '-p', String(ns)], () => prep(cl, Array.from({ length: M }, (_, i) => [s.known[i % s.known.length]]), 25));
    await sleep(2500);
    await traced('perf', ['record', '-F', '4999', '-g', '-o', path.join(out, 'perf.data'), '-p', String(ns)], () => prep(cl, e.claims(PERF_CALLS, 'perf').map((c) => [c]), 25));
    cl.close();
  } finally {
    await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
})().catch((e) => { console.error(e); process.exit(1); });
