'use strict';
// End-to-end tests of the publisher's HTTP layer (publisher/http.c,
// kubeconfig.c, discovery.c) through build/tests/kp_httpcheck, against the
// kube-apiserver emulator (tests/apiserver-emu, an independent peer).
// Run: KP_BUILD=build node --test tests/e2e/http.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const https = require('node:https');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { startEmulator } = require('../apiserver-emu');
const { makePki } = require('../apiserver-emu/certs.js');

const ROOT = path.resolve(__dirname, '..', '..');
const BUILD = path.resolve(ROOT, process.env.KP_BUILD || 'build');
const BIN = path.join(BUILD, 'tests', 'kp_httpcheck');
const G = '/apis/resource.k8s.io';

// kubeconfig renders one cluster, one user, one context; cluster and user
// are objects of kubeconfig fields (values quoted as JSON strings).
function kubeconfig(cluster, user) {
  const fields = (o) => Object.entries(o).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}\n`).join('');
  return 'apiVersion: v1\nkind: Config\n'
    + `clusters:\n- name: emu\n  cluster:\n${fields(cluster)}`
    + `users:\n- name: me\n  user:\n${Object.keys(user).length ? fields(user) : '    {}\n'}`
    + 'contexts:\n- name: emu\n  context:\n    cluster: emu\n    user: me\n'
    + 'current-context: emu\n';
}

// setup starts an emulator writing its token to dir/token and a kubeconfig
// dir/kubeconfig (CA file, tokenFile, relative paths) unless told otherwise.
async function setup(t, { emuOpts = {}, cluster, user } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-http-'));
  const emu = await startEmulator({ tokenFile: path.join(dir, 'token'), dir: path.join(dir, 'pki'), ...emuOpts });
  t.after(async () => {
    await emu.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  fs.copyFileSync(emu.caFile, path.join(dir, 'ca.crt'));
  const kc = path.join(dir, 'kubeconfig');
  const write = (c, u) => fs.writeFileSync(kc, kubeconfig(c, u));
  write(cluster || { server: emu.url, 'certificate-authority': 'ca.crt' }, user || { tokenFile: 'token' });
  return { emu, dir, kc, write };
}

// Runs kp_httpcheck; resolves with {code, out, lines}. `onLine(line, proc)`
// sees each stdout line as it comes (for interactive commands).
function run(args, { env = {}, onLine, timeoutMs = 30000 } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(BIN, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const lines = [];
    let stderr = '';
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`kp_httpcheck timed out; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`)); }, timeoutMs);
    proc.stderr.on('data', (d) => { stderr += d; });
    readline.createInterface({ input: proc.stdout }).on('line', (l) => {
      lines.push(l);
      if (onLine) Promise.resolve(onLine(l, proc)).catch(reject);
    });
    proc.on('error', reject);
    proc.on('close', (code) => {
      clearTimeout(timer);
      // Under KP_SANITIZE a report (leaks included) fails the test.
      if (/Sanitizer|runtime error:/.test(stderr)) reject(new Error(`sanitizer report:\n${stderr}`));
      resolve({ code, lines, out: lines.join('\n'), stderr });
    });
  });
}

const check = (kc, ...args) => run(['--kubeconfig', kc, ...args]);

// createSlice POSTs a v1 ResourceSlice as another client would.
function createSlice(emu, name) {
  const body = JSON.stringify({
    apiVersion: 'resource.k8s.io/v1', kind: 'ResourceSlice', metadata: { name },
    spec: { driver: 'gpu.example.com', nodeName: 'node-1', pool: { name: 'node-1', generation: 1, resourceSliceCount: 1 }, devices: [{ name: 'gpu-0' }] },
  });
  return new Promise((resolve, reject) => {
    const req = https.request(`${emu.url}${G}/v1/resourceslices`, {
      method: 'POST', ca: emu.caPem, agent: false,
      headers: { Authorization: `Bearer ${emu.token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    }, (res) => { res.resume(); res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`POST: ${res.statusCode}`)))); });
    req.on('error', reject);
    req.end(body);
  });
}

test('kp_httpcheck is built', () => {
  assert.ok(fs.existsSync(BIN), `${BIN} missing: build first (KP_BUILD=${BUILD})`);
});

test('GET with the right CA and a token file', async (t) => {
  const { emu, kc } = await setup(t);
  const r = await check(kc, 'get', '/version');
  assert.equal(r.code, 0, r.out + r.stderr);
  assert.equal(r.lines[0], 'status 200');
  assert.equal(JSON.parse(r.lines[1].slice(5)).gitVersion, 'v1.34.0');
  const log = emu.requests();
  assert.equal(log.length, 1);
  assert.equal(log[0].user, 'system:serviceaccount:kube-system:dra-plugin');
  assert.equal(log[0].userAgent, 'kubeletplugin/0.1.0');
});

test('inline certificate-authority-data works too', async (t) => {
  const { emu, kc, write } = await setup(t);
  write({ server: emu.url, 'certificate-authority-data': Buffer.from(emu.caPem).toString('base64') }, { token: emu.token });
  const r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 200', r.out + r.stderr);
});

test('a wrong CA is a clear TLS error, and nothing reaches the server', async (t) => {
  const { emu, dir, kc, write } = await setup(t);
  const other = makePki(path.join(dir, 'other'));
  write({ server: emu.url, 'certificate-authority': other.caFile }, { tokenFile: 'token' });
  const r = await check(kc, 'get', '/version');
  assert.equal(r.code, 1);
  // OpenSSL's words depend on whether the server sends its CA along.
  assert.match(r.lines[0], /^error SSL certificate problem: (unable to get local issuer certificate|self-signed certificate in certificate chain)$/);
  assert.equal(emu.requests().length, 0);
});

test('environment proxies are ignored (only proxy-url is used)', async (t) => {
  const { kc } = await setup(t);
  const r = await run(['--kubeconfig', kc, 'get', '/version'], {
    env: { HTTPS_PROXY: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9', ALL_PROXY: 'http://127.0.0.1:9' },
  });
  assert.equal(r.lines[0], 'status 200', r.out);
  // An explicit proxy-url is used: this one refuses connections.
  const { emu, kc: kc2, write } = await setup(t);
  write({ server: emu.url, 'certificate-authority': 'ca.crt', 'proxy-url': 'http://127.0.0.1:9' }, { tokenFile: 'token' });
  const r2 = await check(kc2, 'get', '/version');
  assert.equal(r2.code, 1);
  assert.match(r2.lines[0], /^error Failed to connect to 127\.0\.0\.1 port 9/);
});

test('an unknown token: the 401 is reported, without a retry', async (t) => {
  const { emu, kc, write } = await setup(t);
  write({ server: emu.url, 'certificate-authority': 'ca.crt' }, { token: 'not-a-known-token' });
  const r = await check(kc, 'get', '/version');
  assert.equal(r.code, 0);
  assert.equal(r.lines[0], 'status 401');
  assert.equal(JSON.parse(r.lines[1].slice(5)).reason, 'Unauthorized');
  assert.equal(emu.requests().length, 1);
  // A token file that still holds the rejected token: still one request.
  emu.removeToken(emu.token);
  write({ server: emu.url, 'certificate-authority': 'ca.crt' }, { tokenFile: 'token' });
  emu.resetLog();
  const r2 = await check(kc, 'get', '/version');
  assert.equal(r2.lines[0], 'status 401');
  assert.equal(emu.requests().length, 1, 'an unchanged token file is not retried');
});

test('a token rotated in the token file: one 401, then one retry that works', async (t) => {
  const { emu, kc } = await setup(t);
  let rotated;
  const r = await run(['--kubeconfig', kc, 'get', '/version', 'wait', 'get', '/version'], {
    onLine: (l, proc) => {
      if (l !== 'waiting') return;
      rotated = emu.rotateToken(); // the old token is rejected from now on
      proc.stdin.write('\n');
    },
  });
  assert.equal(r.code, 0, r.out + r.stderr);
  assert.deepEqual(r.lines.filter((l) => l.startsWith('status')), ['status 200', 'status 200']);
  assert.equal(fs.readFileSync(path.join(path.dirname(kc), 'token'), 'utf8').trim(), rotated);
  assert.deepEqual(emu.requests().map((e) => e.status), [200, 401, 200]);
});

test('429 with Retry-After: 1 waits a second and succeeds', async (t) => {
  const { emu, kc } = await setup(t);
  emu.inject({ method: 'GET', path: '/version', status: 429, retryAfter: 1 });
  const r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 200', r.out);
  const log = emu.requests();
  assert.deepEqual(log.map((e) => e.status), [429, 200]);
  assert.ok(log[1].time - log[0].time >= 1000, `retried after ${log[1].time - log[0].time} ms`);
});

test('5xx: retried with Retry-After, reported without it, at most 10 retries', async (t) => {
  const { emu, kc } = await setup(t);
  emu.inject({ method: 'GET', path: '/version', status: 500, retryAfter: 0, times: 2 });
  let r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 200', r.out);
  assert.deepEqual(emu.requests().map((e) => e.status), [500, 500, 200]);

  emu.resetLog();
  emu.inject({ method: 'GET', path: '/version', status: 503 });
  r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 503');
  assert.equal(emu.requests().length, 1, 'no Retry-After, no retry');

  emu.resetLog();
  emu.inject({ method: 'GET', path: '/version', status: 503, retryAfter: 0, times: Infinity });
  r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 503');
  assert.equal(emu.requests().length, 11, 'one try and 10 retries, as client-go');
  emu.clearFaults();

  // A non-integer Retry-After (an HTTP date) is not honoured, as client-go.
  emu.resetLog();
  emu.inject({ method: 'GET', path: '/version', status: 429, retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' });
  r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 429');
  assert.equal(emu.requests().length, 1);
});

test('a connection reset on a GET is retried', async (t) => {
  const { emu, kc } = await setup(t);
  emu.inject({ method: 'GET', path: '/version', action: 'reset' });
  const r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 200', r.out);
  assert.equal(emu.requests().length, 2);
});

test('a burst of 30 requests from 4 threads keeps to 5 QPS, burst 10', async (t) => {
  const { emu, kc } = await setup(t);
  const r = await check(kc, '--qps', '5', '--burst', '10', 'burst', '30', '/version');
  assert.equal(r.lines[0], 'burst ok=30 err=0', r.out + r.stderr);
  const log = emu.requests();
  assert.equal(log.length, 30);
  const rate = emu.checkRate({ qps: 5, burst: 10 });
  assert.ok(rate.ok, JSON.stringify(rate.violations));
  // The checker does catch a faster client: the first 10 came at once.
  assert.equal(emu.checkRate({ qps: 5, burst: 5 }).ok, false);
  const span = log[log.length - 1].time - log[0].time;
  assert.ok(span >= 3500, `30 requests took ${span} ms (20 beyond the burst at 5/s: ~4 s)`);

  // The defaults are the same (0 means client-go's 5 and 10).
  emu.resetLog();
  const r2 = await check(kc, 'burst', '15', '/version');
  assert.equal(r2.lines[0], 'burst ok=15 err=0');
  assert.ok(emu.checkRate({ qps: 5, burst: 10 }).ok);
  assert.equal(emu.checkRate({ qps: 5, burst: 5 }).ok, false);
});

test('a watch gets its events and ends when the server ends it', async (t) => {
  const { emu, kc } = await setup(t);
  await createSlice(emu, 'a');
  await createSlice(emu, 'b');
  const p = `${G}/v1/resourceslices?watch=true&resourceVersion=0&allowWatchBookmarks=true`;
  let seen = 0;
  const start = Date.now();
  const r = await run(['--kubeconfig', kc, 'watch', p, '30'], {
    onLine: (l) => {
      if (l.startsWith('line ') && ++seen === 3) emu.dropWatches();
      if (l.startsWith('line ') && seen === 2) return createSlice(emu, 'c');
      return undefined;
    },
  });
  const events = r.lines.filter((l) => l.startsWith('line ')).map((l) => JSON.parse(l.slice(5)));
  assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'a'], ['ADDED', 'b'], ['ADDED', 'c']]);
  assert.equal(events[0].object.kind, 'ResourceSlice');
  assert.ok(!r.lines.includes('stopping'), r.out);
  assert.equal(r.lines[r.lines.length - 1], 'watch-end rc=0');
  assert.ok(Date.now() - start < 10000);
  assert.equal(emu.activeWatches(), 0);
});

test('a watch: *stop ends it within about a second; a reset is an error', async (t) => {
  const { emu, kc } = await setup(t);
  const p = `${G}/v1/resourceslices?watch=true&resourceVersion=0`;
  const start = Date.now();
  const r = await check(kc, 'watch', p, '1');
  const took = Date.now() - start;
  assert.deepEqual(r.lines, ['stopping', 'watch-end rc=0']);
  assert.ok(took < 3500, `took ${took} ms`);

  // A reset connection: the stream did not end cleanly.
  const r3p = run(['--kubeconfig', kc, 'watch', p, '30']);
  await emu.waitFor(() => emu.activeWatches() > 0);
  emu.dropWatches({ mode: 'reset' });
  const r3 = await r3p;
  assert.match(r3.lines[r3.lines.length - 1], /^watch-end rc=-5$/);
  assert.match(r3.stderr, /watch \/apis\/resource\.k8s\.io\/v1\/resourceslices/);
});

test('a watch answered 403 is an error naming the status', async (t) => {
  const { emu, kc } = await setup(t);
  emu.inject({ method: 'GET', path: `${G}/v1/resourceslices`, status: 403 });
  const r = await check(kc, 'watch', `${G}/v1/resourceslices?watch=true`, '5');
  assert.equal(r.lines[r.lines.length - 1], 'watch-end rc=-4004');
  assert.match(r.stderr, /HTTP 403/);
});

test('discovery: v1 on a 1.34-like server, v1beta2 on 1.33, v1beta1 on 1.32', async (t) => {
  const cases = [[undefined, 'v1'], [['v1beta2', 'v1beta1'], 'v1beta2'], [['v1beta1'], 'v1beta1']];
  for (const [versions, want] of cases) {
    const { kc } = await setup(t, { emuOpts: versions ? { versions } : {} });
    const r = await check(kc, 'discover');
    assert.equal(r.lines[0], `version ${want}`, r.out);
  }
  const { kc } = await setup(t, { emuOpts: { versions: [] } });
  const r = await check(kc, 'discover');
  assert.match(r.lines[0], /^error GET \/apis\/resource.k8s.io: 404: the resource.k8s.io API group is not served: is DRA \(DynamicResourceAllocation\) enabled/);
});

test('insecure-skip-tls-verify works without a CA', async (t) => {
  const { emu, kc, write } = await setup(t);
  write({ server: emu.url, 'insecure-skip-tls-verify': true }, { tokenFile: 'token' });
  const r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 200', r.out);
});

test('tls-server-name: the name sent and verified, not the address', async (t) => {
  const { emu, kc, write } = await setup(t);
  write({ server: emu.url, 'certificate-authority': 'ca.crt', 'tls-server-name': 'localhost' }, { tokenFile: 'token' });
  let r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 200', r.out);
  write({ server: emu.url, 'certificate-authority': 'ca.crt', 'tls-server-name': 'wrong.example' }, { tokenFile: 'token' });
  r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], "error SSL: no alternative certificate subject name matches target host name 'wrong.example'");
});

test('client-certificate authentication (files and inline data)', async (t) => {
  const { emu, kc, write } = await setup(t);
  const cert = emu.issueClientCert('alice', ['devs']);
  write({ server: emu.url, 'certificate-authority': 'ca.crt' }, { 'client-certificate': cert.certFile, 'client-key': cert.keyFile });
  let r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 200', r.out);
  write({ server: emu.url, 'certificate-authority': 'ca.crt' }, {
    'client-certificate-data': Buffer.from(cert.certPem).toString('base64'),
    'client-key-data': Buffer.from(cert.keyPem).toString('base64'),
  });
  r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 200', r.out);
  assert.deepEqual(emu.requests().map((e) => e.user), ['alice', 'alice']);
  // Without any credentials the emulator answers 401.
  write({ server: emu.url, 'certificate-authority': 'ca.crt' }, {});
  r = await check(kc, 'get', '/version');
  assert.equal(r.lines[0], 'status 401');
});

test('a bad kubeconfig is reported at load', async (t) => {
  const { emu, kc, write } = await setup(t);
  write({ server: emu.url, 'certificate-authority': 'ca.crt' }, { tokenFile: 'missing-token' });
  const r = await check(kc, 'get', '/version');
  assert.equal(r.code, 1);
  assert.equal(r.lines[0], `load-error kubeconfig ${kc}: user "me": token file ${path.join(path.dirname(kc), 'missing-token')}: No such file or directory`);
  assert.equal(emu.requests().length, 0);
});

test('the Warning header is logged at V(2); tokens never are', async (t) => {
  const { emu, kc } = await setup(t, { emuOpts: { kubeVersion: '1.35.0' } });
  let rotated;
  const r = await run(['--kubeconfig', kc, '-v', '9', 'get', `${G}/v1beta1/resourceslices`, 'wait', 'get', '/version'], {
    onLine: (l, proc) => {
      if (l !== 'waiting') return;
      rotated = emu.rotateToken();
      proc.stdin.write('\n');
    },
  });
  assert.equal(r.lines[0], 'status 200', r.out);
  assert.match(r.stderr, /GET \/apis\/resource\.k8s\.io\/v1beta1\/resourceslices: warning: 299 - "resource\.k8s\.io\/v1beta1 ResourceSlice is deprecated in v1\.35\+/);
  assert.match(r.stderr, /401, retrying with the re-read token/);
  for (const tok of [...emu.tokens, rotated]) assert.ok(!r.stderr.includes(tok), 'a token was logged');
  const quiet = await run(['--kubeconfig', kc, '-v', '1', 'get', `${G}/v1beta1/resourceslices`]);
  assert.doesNotMatch(quiet.stderr, /warning: 299/);
});

test('http_escape percent-encodes a query value; PATCH is a merge patch', async (t) => {
  const { emu, kc } = await setup(t);
  const r = await check(kc, 'escape', 'spec.driver=gpu.example.com,spec.nodeName=node 1/ä');
  assert.equal(r.lines[0], `escaped ${encodeURIComponent('spec.driver=gpu.example.com,spec.nodeName=node 1/ä')}`);
  await createSlice(emu, 'p');
  const p = await check(kc, 'request', 'PATCH', `${G}/v1/resourceslices/p`, '{"metadata":{"labels":{"a":"b"}}}');
  assert.equal(p.lines[0], 'status 200', p.out);
  assert.equal(JSON.parse(p.lines[1].slice(5)).metadata.labels.a, 'b');
  const d = await check(kc, 'request', 'DELETE', `${G}/v1/resourceslices/p`, '-');
  assert.equal(d.lines[0], 'status 200', d.out);
  assert.deepEqual(emu.requests().map((e) => [e.method, e.status]), [['POST', 201], ['PATCH', 200], ['DELETE', 200]]);
});

// A handle keeps its fixed options after a plain GET (publisher/http.c);
// anything else must start from a reset handle: one process, one thread,
// so every request below runs on the same easy handle.
test('one handle: GETs between a PATCH, a DELETE and a watch are plain, authenticated GETs', async (t) => {
  const { emu, kc } = await setup(t);
  await createSlice(emu, 'p');
  emu.resetLog();
  const s = `${G}/v1/resourceslices/p`;
  const r = await check(kc, 'get', s, 'request', 'PATCH', s, '{"metadata":{"labels":{"a":"b"}}}', 'get', s,
    'watch', `${G}/v1/resourceslices?watch=true`, '1', 'get', s, 'request', 'DELETE', s, '-', 'get', s);
  assert.equal(r.code, 0, r.out);
  assert.deepEqual(r.lines.filter((l) => l.startsWith('status ')), ['status 200', 'status 200', 'status 200', 'status 200', 'status 200', 'status 404'], r.out);
  const bodies = r.lines.filter((l) => l.startsWith('body ')).map((l) => JSON.parse(l.slice(5)));
  assert.equal(bodies[2].metadata.labels.a, 'b', r.out);
  const log = emu.requests();
  assert.deepEqual(log.map((e) => [e.method, e.watch ? 'watch' : e.path === s ? 'p' : e.path]),
    [['GET', 'p'], ['PATCH', 'p'], ['GET', 'p'], ['GET', 'watch'], ['GET', 'p'], ['DELETE', 'p'], ['GET', 'p']]);
  for (const e of log) {
    assert.ok(e.user, `${e.method} ${e.path}: not authenticated`);
    assert.match(e.userAgent, /^kubeletplugin\//);
    if (e.method === 'GET' || e.method === 'DELETE') assert.equal(e.body, undefined, `${e.method} ${e.path} carried a body`);
  }
});

// --- a hostile API server --------------------------------------------
// The publisher's claim look-up (publisher/claims.c claims_get, through
// kp_httpcheck's `claim` command: one process, one thread, so every
// look-up runs on the same easy handle) against a server that speaks raw
// HTTP/1.1 over TLS and writes whatever bytes it likes: redirects to
// another host, a response smuggled behind the first, resets in the
// middle of a reply on a reused connection, huge headers, an endless
// body, a trickle. docs/security.md "What the API server sends the
// publisher".

const tls = require('node:tls');
const zlib = require('node:zlib');
const { until, memFind } = require('./lib/plugin');

const RAW_TOKEN = 'raw-secret-token-0123456789';
const RAW_DRV = 'gpu.example.com';
const CLAIMS = `${G}/v1/namespaces/default/resourceclaims`;
let rawPki;

// rawServer calls onRequest(req, sock) for each request head as it
// arrives: req = {conn, n, line, headers: ['Name: value', ...], body}; every
// request is kept in reqs, every connection in conns ({closed}).
async function rawServer(t, onRequest) {
  if (!rawPki) rawPki = makePki();
  const reqs = [];
  const conns = [];
  const live = new Set();
  const srv = tls.createServer({ key: rawPki.keyPem, cert: rawPki.certPem }, (sock) => {
    const c = { closed: false, id: conns.length };
    conns.push(c);
    live.add(sock);
    let buf = Buffer.alloc(0);
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      let i;
      while ((i = buf.indexOf('\r\n\r\n')) !== -1) {
        const lines = buf.subarray(0, i).toString('latin1').split('\r\n');
        const cl = lines.find((l) => /^content-length:/i.test(l));
        const blen = cl ? Number(cl.split(':')[1]) : 0;
        if (buf.length < i + 4 + blen) break;
        const req = { conn: c.id, n: reqs.length, line: lines[0], headers: lines.slice(1),
          body: buf.subarray(i + 4, i + 4 + blen).toString() };
        buf = buf.subarray(i + 4 + blen);
        reqs.push(req);
        onRequest(req, sock);
      }
    });
    sock.on('error', () => {});
    sock.on('close', () => { c.closed = true; live.delete(sock); });
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => { for (const s of live) s.destroy(); srv.close(resolve); }));
  return { url: `https://127.0.0.1:${srv.address().port}`, reqs, conns };
}

// A kubeconfig for srv with an inline token, in a fresh directory.
function rawKubeconfig(t, srv) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kp-rawapi-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.copyFileSync(rawPki.caFile, path.join(dir, 'ca.crt'));
  const kc = path.join(dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: srv.url, 'certificate-authority': 'ca.crt' }, { token: RAW_TOKEN }));
  return kc;
}

const claimJson = (name, uid, device = 'gpu-0') => JSON.stringify({
  kind: 'ResourceClaim', apiVersion: 'resource.k8s.io/v1', metadata: { name, namespace: 'default', uid },
  spec: {}, status: { allocation: { devices: { results: [{ request: 'r', driver: RAW_DRV, pool: 'p', device }] } } },
});
const ok200 = (body, extra = '') =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const uidOf = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const claimArgs = (name, i) => ['claim', 'default', name, uidOf(i), RAW_DRV];
const claimOk = (i, device = 'gpu-0') => `claim code=0 msg= results=r:p/${device} config=[]`;
// The claim name a request line asks for.
const askedName = (req) => (/resourceclaims\/([^ ]+) HTTP\/1\.1$/.exec(req.line) || [])[1];

test('HOSTILE API: redirects (301, 302, 307, 308) to another host are not followed: the token never leaves for it, one GET a look-up', async (t) => {
  const other = await rawServer(t, (req, sock) => sock.end(ok200(claimJson(askedName(req), uidOf(0)))));
  const codes = [301, 302, 307, 308];
  const srv = await rawServer(t, (req, sock) => {
    const code = codes[req.n];
    sock.write(`HTTP/1.1 ${code} Moved\r\nLocation: ${other.url}${CLAIMS}/${askedName(req)}\r\nContent-Length: 0\r\n\r\n`);
  });
  const kc = rawKubeconfig(t, srv);
  const r = await run(['--kubeconfig', kc, ...codes.flatMap((c, i) => claimArgs(`c${i}`, 0))]);
  assert.equal(r.code, 0, r.out + r.stderr);
  codes.forEach((c, i) => assert.match(r.lines[i], new RegExp(`^claim code=KP_EKUBE msg=claim default/c${i}: .*${c}`), r.out));
  assert.equal(srv.reqs.length, codes.length, 'one GET a look-up, no retry');
  assert.equal(other.conns.length, 0, 'a connection reached the redirect target');
});

test('HOSTILE API: a response smuggled behind the first one never answers the next look-up', async (t) => {
  const srv = await rawServer(t, (req, sock) => {
    const name = askedName(req);
    if (name === 'c0') sock.write(ok200(claimJson('c0', uidOf(0))) + ok200(claimJson('c1', uidOf(1), 'evil')));
    else sock.write(ok200(claimJson(name, uidOf(Number(name.slice(1))))));
  });
  const kc = rawKubeconfig(t, srv);
  const r = await run(['--kubeconfig', kc, ...claimArgs('c0', 0), ...claimArgs('c1', 1), ...claimArgs('c2', 2)]);
  assert.deepEqual(r.lines, [claimOk(0), claimOk(1), claimOk(2)], r.out + r.stderr);
  assert.deepEqual(srv.reqs.map(askedName), ['c0', 'c1', 'c2']);
});

// The header lines of a request, without the ones that name the
// connection's own peer, sorted.
const headerSet = (req) => req.headers.filter((h) => !/^host:/i.test(h)).sort();

test('HOSTILE API: a reset in the middle of a reply, a PATCH and a server closing a kept-alive connection: every look-up on the reused handle sends exactly the first one\'s headers, one Authorization line', async (t) => {
  const srv = await rawServer(t, (req, sock) => {
    if (req.line.startsWith('PATCH ')) {
      sock.write(ok200('{"kind":"Status","status":"Success"}'));
      return;
    }
    const name = askedName(req);
    const body = claimJson(name, uidOf(Number(name.slice(1))));
    const tries = srv.reqs.filter((q) => askedName(q) === name).length;
    if (name === 'c1' && tries === 1) {
      // Headers and a tenth of the body, then the connection dies.
      sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, body.length / 10)}`);
      setTimeout(() => sock.destroy(), 50);
    } else if (name === 'c3') sock.end(ok200(body, 'Connection: keep-alive\r\n'));	// then FIN
    else sock.write(ok200(body));
  });
  const kc = rawKubeconfig(t, srv);
  const r = await run(['--kubeconfig', kc, ...claimArgs('c0', 0), ...claimArgs('c1', 1), ...claimArgs('c2', 2),
    'request', 'PATCH', `${CLAIMS}/c2`, '{"metadata":{"labels":{"a":"b"}}}', ...claimArgs('c3', 3), ...claimArgs('c4', 4)]);
  assert.deepEqual(r.lines.filter((l) => l.startsWith('claim ')), [0, 1, 2, 3, 4].map((i) => claimOk(i)), r.out + r.stderr);
  const gets = srv.reqs.filter((q) => q.line.startsWith('GET '));
  // The cut reply retried once; c4 may have gone out once on the
  // connection the server had closed before curl saw the FIN.
  const asked = gets.map(askedName);
  assert.deepEqual(asked.slice(0, 5), ['c0', 'c1', 'c1', 'c2', 'c3'], asked.join());
  assert.ok(asked.length <= 7 && asked.slice(5).length >= 1 && asked.slice(5).every((n) => n === 'c4'), asked.join());
  const first = headerSet(gets[0]);
  assert.deepEqual(first.filter((h) => /^authorization:/i.test(h)), [`Authorization: Bearer ${RAW_TOKEN}`]);
  for (const q of gets) {
    assert.equal(q.line, `GET ${CLAIMS}/${askedName(q)} HTTP/1.1`);
    assert.deepEqual(headerSet(q), first, `request ${q.n} (${q.line}) differs from the first`);
  }
  assert.doesNotMatch(first.join('\n'), /^(content-type|content-length|transfer-encoding|expect):/im, first.join('\n'));
  const patch = srv.reqs.find((q) => q.line.startsWith('PATCH '));
  assert.ok(patch.headers.includes('Content-Type: application/merge-patch+json'), patch.headers.join('\n'));
  // The retry and the look-up after the FIN each went on a new connection.
  assert.notEqual(gets[2].conn, gets[1].conn);
  assert.notEqual(gets[gets.length - 1].conn, gets[4].conn);
});

test('HOSTILE API: a megabyte of response headers, one 200 KiB header line, an endless chunked body, gzip bombs: each look-up fails naming why, the next one works', async (t) => {
  const srv = await rawServer(t, (req, sock) => {
    const name = askedName(req);
    if (name === 'many') {
      sock.write('HTTP/1.1 200 OK\r\n');
      for (let i = 0; i < 2048; i++) sock.write(`X-Pad-${i}: ${'h'.repeat(500)}\r\n`);
      sock.write('Content-Length: 2\r\n\r\n{}');
    } else if (name === 'long') {
      sock.write(`HTTP/1.1 200 OK\r\nX-Long: ${'l'.repeat(200 << 10)}\r\nContent-Length: 2\r\n\r\n{}`);
    } else if (name === 'gzbomb' || name === 'tebomb') {
      // 64 MiB of JSON in 64 KiB of gzip, as content or transfer coding.
      const body = zlib.gzipSync(Buffer.alloc(64 << 20, '['));
      sock.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${name === 'gzbomb' ? 'Content-Encoding: gzip' : 'Transfer-Encoding: gzip'}\r\n`
        + `${name === 'gzbomb' ? `Content-Length: ${body.length}\r\n` : 'Connection: close\r\n'}\r\n`);
      if (name === 'gzbomb') sock.write(body);
      else sock.end(body);
    } else if (name === 'endless') {
      sock.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = `10000\r\n${'['.repeat(0x10000)}\r\n`;
      let sent = 0;
      const pump = () => {
        while (!sock.destroyed && sent < (64 << 20) && sock.write(chunk)) sent += 0x10000;
        if (!sock.destroyed && sent < (64 << 20)) sock.once('drain', pump);
      };
      pump();
    } else sock.write(ok200(claimJson(name, uidOf(9))));
  });
  const kc = rawKubeconfig(t, srv);
  const r = await run(['--kubeconfig', kc, ...claimArgs('many', 9), ...claimArgs('c9', 9), ...claimArgs('long', 9),
    ...claimArgs('c9', 9), ...claimArgs('endless', 9), ...claimArgs('c9', 9), ...claimArgs('gzbomb', 9),
    ...claimArgs('tebomb', 9), ...claimArgs('c9', 9)]);
  assert.equal(r.code, 0, r.out + r.stderr);
  assert.deepEqual(r.lines, [
    `claim code=KP_EKUBE msg=claim default/many: GET ${CLAIMS}/many: response headers larger than 262144 bytes: refused results= config=`,
    claimOk(9),
    // libcurl's own cap on one header line (100 KiB), in its words.
    'claim code=KP_EKUBE msg=claim default/long: Out of memory results= config=',
    claimOk(9),
    `claim code=KP_EKUBE msg=claim default/endless: GET ${CLAIMS}/endless: response larger than 4194304 bytes: refused results= config=`,
    claimOk(9),
    // No Accept-Encoding is sent: a gzip content coding stays gzip; a
    // transfer coding libcurl decodes counts against the limit decoded.
    'claim code=KP_EPROTO msg=claim default/gzbomb: not a ResourceClaim results= config=',
    `claim code=KP_EKUBE msg=claim default/tebomb: GET ${CLAIMS}/tebomb: response larger than 4194304 bytes: refused results= config=`,
    claimOk(9),
  ], r.out);
  assert.ok(srv.reqs.every((q) => !q.headers.some((h) => /^(accept-encoding|te):/i.test(h))), 'a coding was asked for');
  // Refusals are not transport failures: no retry.
  assert.deepEqual(srv.reqs.map(askedName), ['many', 'c9', 'long', 'c9', 'endless', 'c9', 'gzbomb', 'tebomb', 'c9']);
});

test('HOSTILE API: a trickle (headers or body a byte at a time) ends at the request timeout; the next look-up works', async (t) => {
  const srv = await rawServer(t, (req, sock) => {
    const name = askedName(req);
    const head = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n';
    if (name === 'slowhead' || name === 'slowbody') {
      // A byte every 100 ms: of the head, or of the body after it.
      let i = 0;
      if (name === 'slowbody') sock.write(head);
      const timer = setInterval(() => {
        if (sock.destroyed) clearInterval(timer);
        else sock.write(name === 'slowhead' && i < head.length ? head[i++] : ' ');
      }, 100);
      sock.on('close', () => clearInterval(timer));
    } else sock.write(ok200(claimJson(name, uidOf(9))));
  });
  const kc = rawKubeconfig(t, srv);
  const r = await run(['--kubeconfig', kc, '--timeout', '1000', ...claimArgs('slowhead', 9), ...claimArgs('c9', 9),
    ...claimArgs('slowbody', 9), ...claimArgs('c9', 9)]);
  assert.equal(r.code, 0, r.out + r.stderr);
  assert.equal(r.lines.length, 4, r.out);
  assert.match(r.lines[0], /^claim code=KP_EKUBE msg=claim default\/slowhead: Operation timed out after \d+ milliseconds with 0 bytes received /);
  assert.equal(r.lines[1], claimOk(9));
  assert.match(r.lines[2], /^claim code=KP_EKUBE msg=claim default\/slowbody: Operation timed out after \d+ milliseconds with \d+ out of 100000 bytes received /);
  assert.equal(r.lines[3], claimOk(9));
  assert.deepEqual(srv.reqs.map(askedName), ['slowhead', 'c9', 'slowbody', 'c9'], 'a timeout is not retried');
  // The trickling connections were dropped, not left open.
  await until(() => srv.conns.every((c) => c.closed), 5000);
});

// kube-apiserver speaks HTTP/2 (libcurl offers h2 by ALPN): the same
// handle's look-ups over one, through a stream reset in the middle of a
// reply and a GOAWAY.
test('HOSTILE API over HTTP/2: a stream reset in the middle of a reply fails that look-up alone, a GOAWAY moves the next to a new connection; every request has the first one\'s headers, one Authorization', async (t) => {
  if (!rawPki) rawPki = makePki();
  const http2 = require('node:http2');
  const reqs = [];
  const sessions = new Set();
  const srv = http2.createSecureServer({ key: rawPki.keyPem, cert: rawPki.certPem });
  let nextSession = 0;
  srv.on('session', (s) => {
    s.kpId = nextSession++;
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => {});
  });
  srv.on('stream', (stream, headers, flags, raw) => {
    stream.on('error', () => {});
    const name = headers[':path'].split('/').pop();
    const session = stream.session;
    reqs.push({ name, session: session.kpId, raw: raw.filter((_, i) => i % 2 === 0).map((k, i) => `${k}: ${raw[2 * i + 1]}`) });
    const body = claimJson(name, uidOf(Number(name.slice(1))));
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    if (name === 'c1') {
      stream.write(body.slice(0, 20));
      setTimeout(() => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR), 50);
    } else {
      stream.end(body);
      if (name === 'c2') stream.on('close', () => session.goaway());
    }
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => { for (const s of sessions) s.destroy(); srv.close(resolve); }));
  const kc = rawKubeconfig(t, { url: `https://127.0.0.1:${srv.address().port}` });
  const r = await run(['--kubeconfig', kc, ...[0, 1, 2, 3].flatMap((i) => claimArgs(`c${i}`, i))]);
  assert.equal(r.lines.length, 4, r.out + r.stderr);
  assert.equal(r.lines[0], claimOk(0));
  // libcurl 7.88 returns the cut body as complete when the RST_STREAM
  // comes in a later read than the data (later ones: a stream error);
  // either way the look-up fails and nothing of it is passed on.
  assert.match(r.lines[1], /^claim code=(KP_EPROTO msg=claim default\/c1: not a ResourceClaim|KP_EKUBE msg=claim default\/c1: HTTP\/2 stream \d+ was not closed cleanly: INTERNAL_ERROR.*) results= config=$/);
  assert.equal(r.lines[2], claimOk(2));
  // The look-up that went out on the connection the GOAWAY closed is
  // asked again on a new one (client-go: IsProbableEOF).
  assert.equal(r.lines[3], claimOk(3), r.stderr);
  const names = reqs.map((q) => q.name);
  assert.deepEqual(names.slice(0, 3), ['c0', 'c1', 'c2'], 'a stream error is not retried');
  assert.ok(names.slice(3).length >= 1 && names.slice(3).every((n) => n === 'c3'), names.join());
  assert.notEqual(reqs[reqs.length - 1].session, reqs[2].session);
  const set = (q) => q.raw.filter((h) => !/^:(path|authority):/.test(h)).sort();
  assert.deepEqual(set(reqs[0]).filter((h) => /^authorization:/i.test(h)), [`authorization: Bearer ${RAW_TOKEN}`]);
  for (const q of reqs) assert.deepEqual(set(q), set(reqs[0]), `the request for ${q.name}`);
});

// A watch runs for minutes: the Authorization line it was started with
// must not stay on its thread's stack meanwhile (a rotated token would
// outlive its wipe there). libcurl's own upload buffer keeps the request
// it sent ("...\r\nAuthorization: ...") until the watch ends; our line
// is the one at the start of a buffer of its own.
test('a running watch keeps no Authorization line of its own (only libcurl\'s copy of the request it sent)', { skip: process.getuid() !== 0 && 'needs root (/proc/<pid>/mem)' }, async (t) => {
  const { emu, kc } = await setup(t);
  await createSlice(emu, 'a');
  const line = Buffer.from(`Authorization: Bearer ${emu.token}`);
  let hits = null;
  let cfgCopies = 0;
  const r = await run(['--kubeconfig', kc, 'watch', `${G}/v1/resourceslices?watch=true&resourceVersion=0`, '1'], {
    onLine: (l, proc) => {
      if (!l.startsWith('line ') || hits) return;
      hits = memFind(proc.pid, line, 2);
      cfgCopies = memFind(proc.pid, Buffer.from(emu.token)).length;
    },
  });
  assert.equal(r.lines[r.lines.length - 1], 'watch-end rc=0', r.out);
  assert.ok(hits, r.out);
  assert.ok(cfgCopies >= 1, 'the scan found no token at all');
  const own = hits.filter((h) => h.before.toString('latin1') !== '\r\n');
  assert.deepEqual(own.map((h) => h.at), [], 'an Authorization line outside libcurl\'s request buffer');
});
