'use strict';
// Red team of kp_claim_info() (issue 25, ce82e05): a hostile API server.
//
// 1. claims_get(): a 200 whose body claims_parse() refuses (not allocated,
//    got replaced, not a ResourceClaim, larger than 1 MiB compact) falls
//    through to the "else" of the status switch since ce82e05: the
//    specific error is replaced by "HTTP 200: <first 120 bytes of the
//    body>" (KP_EKUBE), the claim's own text ends up in kubelet's error.
// 2. One claim of just under 1 MiB compact JSON (the bound the publisher
//    and the supervisor enforce), shaped to make many small allocations:
//    what the nodeserver spends on kp_claim_info() (VmHWM; 58x the claim
//    on ce82e05, refused by the value bound since).
//
// The test driver's "infoq-<n>" claims ask kp_claim_info() n times and
// print one INFOQ line (kp_testdriver.c info_quiet), no dump.
//
//   KP_BUILD=build node --test --test-concurrency=1 tests/e2e/redteam-issue25.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { randomUUID } = require('node:crypto');
const { KubeletSim } = require('../kubelet-sim');
const { makeRoot, withApi, until, roles } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const NODE = 'node-1';
const BOUND = 1024 * 1024;

async function setup(t) {
  const { emu, drv } = await withApi(t, makeRoot(DRIVER), [], {}, { versions: ['v1'], kubeVersion: '1.37.0', nodes: [NODE] });
  const kubelet = new KubeletSim({ registryDir: drv.root.registry, version: '1.37' }).start();
  t.after(() => kubelet.stop());
  await kubelet.waitForDriver(DRIVER);
  return { emu, drv, kubelet };
}

const childLines = (s) => s.split('\n').map((l) => l.replace(/^.*\] stderr: /, ''));
const kb = (pid, key) => {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
};

// A v1 ResourceClaim for name/uid, allocated to DRIVER, whose one result
// carries `n` tolerations that are not objects ("0"): compact JSON just
// under `bytes` (each "0," becomes a json_t, a pointer and a struct
// kp_toleration in the nodeserver).
function bigClaim(name, uid, bytes) {
  const head = JSON.stringify({
    kind: 'ResourceClaim', apiVersion: 'resource.k8s.io/v1',
    metadata: { name, namespace: 'default', uid, resourceVersion: '1001' },
    spec: {},
    status: { allocation: { devices: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-1', tolerations: ['@'] }] } } },
  });
  const [pre, post] = head.split('"@"');
  const n = Math.floor((bytes - pre.length - post.length - 16) / 2);
  return { body: `${pre}${'0,'.repeat(n - 1)}0${post}`, n };
}

function serveRaw(emu, name, body) {
  emu.inject({ method: 'GET', path: `*/resourceclaims/${name}`, action: 'status', status: 200, body, times: Infinity });
}

test('REDTEAM #25: a 200 claims_parse() refuses keeps its own error (not "HTTP 200: <body>")', async (t) => {
  const { emu, kubelet } = await setup(t);
  const unalloc = { namespace: 'default', name: 'unalloc', uid: randomUUID() };
  emu.addClaim({ ...unalloc });
  await assert.rejects(kubelet.nodePrepareResources(DRIVER, [unalloc]), (e) => {
    assert.doesNotMatch(String(e.message), /HTTP 200/, 'the claim body is pasted into the error');
    assert.match(String(e.message), /not allocated/);
    return true;
  });
  // Over the 1 MiB bound as compact JSON: the publisher's own words.
  const big = { namespace: 'default', name: 'big', uid: randomUUID() };
  serveRaw(emu, big.name, bigClaim(big.name, big.uid, BOUND + 4096).body);
  await assert.rejects(kubelet.nodePrepareResources(DRIVER, [big]), (e) => {
    assert.match(String(e.message), /larger than 1 MiB/);
    return true;
  });
});

test('REDTEAM #25: one ~1 MiB claim costs the nodeserver a bounded multiple of its size in kp_claim_info()', async (t) => {
  const { emu, drv, kubelet } = await setup(t);
  const dpid = await drv.pid();
  const pids = await until(() => { const r = roles(dpid); return r.nodeserver ? r : null; });
  // Warm up (the first call's one-off allocations), then measure.
  const warm = { namespace: 'default', name: 'infoq-1-warm', uid: randomUUID() };
  emu.addClaim({ ...warm, allocation: { results: [{ request: 'r', driver: DRIVER, pool: NODE, device: 'dev-1' }] } });
  await kubelet.nodePrepareResources(DRIVER, [warm]);
  const hwm0 = kb(pids.nodeserver, 'VmHWM');
  const c = { namespace: 'default', name: 'infoq-1', uid: randomUUID() };
  const { body, n } = bigClaim(c.name, c.uid, BOUND - 4096);
  assert.ok(JSON.stringify(JSON.parse(body)).length <= BOUND);
  serveRaw(emu, c.name, body);
  const t0 = Date.now();
  await kubelet.nodePrepareResources(DRIVER, [c]);
  const callMs = Date.now() - t0;
  const line = await until(() => childLines(drv.stderr).find((l) => l.startsWith(`INFOQ ${c.name} `)), 30000);
  const hwm1 = kb(pids.nodeserver, 'VmHWM');
  const grew = hwm1 - hwm0;
  t.diagnostic(`claim ${body.length} B, ${n} tolerations; ${line}; call ${callMs} ms; nodeserver VmHWM ${hwm0} -> ${hwm1} kB (+${grew} kB, ${(grew * 1024 / body.length).toFixed(1)}x the claim)`);
  // More JSON values than KP_CLAIM_MAX_VALUES: refused before jansson
  // builds a tree, and said so once in the log.
  assert.match(line, /ok=0 /);
  await drv.stderrMatch(/kp_claim_info: more than 16384 JSON values in the claim: refused/);
  // A nodeserver may spend a few times a claim's size on it; 16x is
  // generous (the JSON, the ClaimReply, a parse, the structs).
  assert.ok(grew * 1024 <= 16 * body.length, `nodeserver grew ${grew} kB for one ${body.length} B claim`);
});
