'use strict';
// bench/emu-claims.js - a front for the API-server emulator whose worker
// processes answer the ResourceClaim GETs side by side, for the bench
// only (bench/example.js's apiWorkers option; the e2e tests use the
// emulator alone). The emulator is one JavaScript thread: it serves the
// GETs of a 100-claim call one after another, at 0.1-0.3 ms of CPU each
// on a busy machine, where a real kube-apiserver answers them in
// parallel (docs/benchmarks-history.md, item 11).
//
// The front listens on its own port and hands each accepted TCP
// connection, before the TLS handshake, to one of n child processes in
// turn (the publisher keeps 4 keep-alive connections). A child
// terminates TLS with the emulator's server certificate and answers
//   GET /apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME
// with a valid bearer token from its replica of the stored claims, with
// the emulator's bytes (convert.js's encodeClaim, the same headers);
// everything else (other versions, unknown claims, writes, watches,
// failed authentication) it passes to the emulator over HTTPS and relays
// the answer. The replica follows the emulator's addClaim, updateClaim
// (so setClaimUID, deallocateClaim) and deleteClaim, which this wraps; a
// GET that reaches a child before the change does is passed on, so it
// sees the emulator's answer. Not replicated: fault rules and the
// request log (a claim GET answered by a child is in neither; use the
// emulator alone to test those), token changes after the start.

const { fork } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const https = require('node:https');
const net = require('node:net');
const path = require('node:path');

const CLAIM_GET = /^\/apis\/resource\.k8s\.io\/v1\/namespaces\/([a-z0-9.-]+)\/resourceclaims\/([a-z0-9.-]+)$/;
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

// claimFront(emu, n): starts the front and its n children; resolves to
// { url, pids(), stop() }.
async function claimFront(emu, n) {
  const init = {
    type: 'init',
    key: fs.readFileSync(path.join(emu.pkiDir, 'server.key'), 'utf8'),
    cert: fs.readFileSync(path.join(emu.pkiDir, 'server.crt'), 'utf8'),
    ca: emu.caPem,
    upstream: emu.port,
    tokens: emu.tokens,
    v1: emu.versions.includes('v1'),
  };
  const kids = Array.from({ length: n }, () => fork(__filename, ['child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  await Promise.all(kids.map((k) => new Promise((resolve, reject) => {
    k.once('message', (m) => (m === 'ready' ? resolve() : reject(new Error(String(m)))));
    k.once('exit', (code) => reject(new Error(`claim worker exited ${code}`)));
    k.send(init);
  })));
  const sync = (ns, name) => {
    const claim = emu.getClaim(ns, name) || null;
    for (const k of kids) if (k.connected) k.send({ type: 'claim', key: `${ns}/${name}`, claim });
  };
  const wrap = (m, keyArgs) => {
    const orig = emu[m];
    emu[m] = (...a) => {
      const r = orig.apply(emu, a);
      const [ns, name] = keyArgs(a, r);
      sync(ns, name);
      return r;
    };
    return orig;
  };
  const originals = {
    addClaim: wrap('addClaim', (a, r) => [r.metadata.namespace, r.metadata.name]),
    updateClaim: wrap('updateClaim', (a) => a),
    deleteClaim: wrap('deleteClaim', (a) => a),
  };
  let next = 0;
  const srv = net.createServer({ pauseOnConnect: true }, (sock) => {
    const k = kids[next++ % kids.length];
    k.send({ type: 'socket' }, sock);
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${srv.address().port}`,
    pids: () => kids.map((k) => k.pid),
    async stop() {
      Object.assign(emu, originals);
      await new Promise((r) => srv.close(() => r()));
      await Promise.all(kids.map((k) => new Promise((r) => {
        if (k.exitCode !== null) { r(); return; }
        k.once('exit', r);
        k.kill('SIGTERM');
      })));
    },
  };
}

// --- the child -------------------------------------------------------------

function child() {
  const C = require('../tests/apiserver-emu/convert.js');
  let server = null;
  let agent = null;
  let opts = null;
  const texts = new Map(); // "ns/name" -> JSON text of the v1 answer
  const relay = (req, res) => {
    const up = https.request({
      // servername: else TLS would check the client's Host header against
      // the emulator's certificate.
      host: '127.0.0.1', servername: 'localhost', port: opts.upstream, method: req.method, path: req.url, headers: req.headers, agent, ca: opts.ca,
    }, (ur) => {
      const h = [];
      for (let i = 0; i < ur.rawHeaders.length; i += 2) {
        if (!HOP.has(ur.rawHeaders[i].toLowerCase())) h.push(ur.rawHeaders[i], ur.rawHeaders[i + 1]);
      }
      res.writeHead(ur.statusCode, h);
      res.flushHeaders();
      ur.pipe(res);
      ur.on('error', () => res.destroy());
    });
    up.on('error', (e) => { if (process.env.EMU_CLAIMS_DEBUG) console.error('relay:', e.message); res.destroy(); });
    res.on('close', () => { if (!res.writableFinished) up.destroy(); });
    req.pipe(up);
  };
  const handle = (req, res) => {
    const m = opts.v1 && req.method === 'GET' && CLAIM_GET.exec(req.url);
    const auth = req.headers.authorization;
    const tok = auth && /^Bearer\s+(\S+)\s*$/i.exec(auth);
    const text = m && tok && opts.tokens.includes(tok[1]) && !req.headers['content-length'] && !req.headers['transfer-encoding']
      ? texts.get(`${m[1]}/${m[2]}`) : undefined;
    if (text === undefined) { relay(req, res); return; }
    res.writeHead(200, {
      'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Audit-Id': crypto.randomUUID(),
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
  };
  process.on('message', (m, handle2) => {
    if (m.type === 'init') {
      opts = m;
      agent = new https.Agent({ keepAlive: true, ca: m.ca });
      server = https.createServer({ key: m.key, cert: m.cert, ca: m.ca, requestCert: true, rejectUnauthorized: false }, handle);
      server.keepAliveTimeout = 60000;
      process.send('ready');
    } else if (m.type === 'claim') {
      if (m.claim) texts.set(m.key, JSON.stringify(C.encodeClaim('v1', m.claim)) + '\n');
      else texts.delete(m.key);
    } else if (m.type === 'socket' && handle2) {
      server.emit('connection', handle2);
      handle2.resume();
    }
  });
  process.on('disconnect', () => process.exit(0));
}

if (require.main === module && process.argv[2] === 'child') child();

module.exports = { claimFront };
