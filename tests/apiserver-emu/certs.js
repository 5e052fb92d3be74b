'use strict';
// A throw-away PKI made with the openssl CLI: a CA, a server certificate for
// 127.0.0.1/localhost and, on demand, client certificates (CN = user name,
// O = groups, as kube-apiserver's x509 authenticator reads them).
// Node has no certificate *issuing* API, hence the CLI.

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');

function openssl(args, cwd) {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

function writeExt(dir, name, text) {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
}

let serial = 0;

// makePki creates the CA and server certificate in dir (a fresh temporary
// directory when omitted) and returns PEM strings plus file paths.
function makePki(dir, { hosts = ['127.0.0.1', 'localhost'] } = {}) {
  dir = dir || fs.mkdtempSync(path.join(os.tmpdir(), 'apiserver-emu-pki-'));
  fs.mkdirSync(dir, { recursive: true });
  const p = (f) => path.join(dir, f);
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', p('ca.key'), '-out', p('ca.crt'), '-days', '2', '-subj', '/CN=apiserver-emu-ca',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  const san = hosts.map((h) => (/^[0-9.:]+$/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
  writeExt(dir, 'server.ext', `subjectAltName=${san}\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\nbasicConstraints=CA:FALSE\n`);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', p('server.key'), '-out', p('server.csr'), '-subj', '/CN=kube-apiserver'], dir);
  openssl(['x509', '-req', '-in', p('server.csr'), '-CA', p('ca.crt'), '-CAkey', p('ca.key'),
    '-set_serial', String(Date.now() * 10 + (serial++ % 10)), '-days', '2', '-extfile', p('server.ext'), '-out', p('server.crt')], dir);
  return {
    dir,
    caFile: p('ca.crt'),
    caKeyFile: p('ca.key'),
    caPem: fs.readFileSync(p('ca.crt'), 'utf8'),
    caKeyPem: fs.readFileSync(p('ca.key'), 'utf8'),
    certPem: fs.readFileSync(p('server.crt'), 'utf8'),
    keyPem: fs.readFileSync(p('server.key'), 'utf8'),
  };
}

// emulatorPki is makePki for startEmulator: the CA and server certificate
// are made once a process and copied into dir (a fresh temporary directory
// when omitted) for each emulator, since the openssl CLI costs about half
// a second a PKI under load and the end-to-end suites start an emulator a
// test. Emulators of one process then share a CA and server key; each
// still has its own files, and client certificates it issues go to its own
// directory. makePki itself still makes a new CA each call (a test's
// "other" CA must differ); APISERVER_EMU_FRESH_PKI=1 makes one an emulator.
let template = null;
const PKI_FILES = ['ca.crt', 'ca.key', 'server.crt', 'server.key'];
function emulatorPki(dir) {
  if (process.env.APISERVER_EMU_FRESH_PKI) return makePki(dir);
  if (!template) {
    template = makePki();
    const own = template.dir;
    process.on('exit', () => fs.rmSync(own, { recursive: true, force: true }));
  }
  dir = dir || fs.mkdtempSync(path.join(os.tmpdir(), 'apiserver-emu-pki-'));
  fs.mkdirSync(dir, { recursive: true });
  for (const f of PKI_FILES) fs.copyFileSync(path.join(template.dir, f), path.join(dir, f));
  return { ...template, dir, caFile: path.join(dir, 'ca.crt'), caKeyFile: path.join(dir, 'ca.key') };
}

// issueClientCert signs a client certificate with the CA of pki.
function issueClientCert(pki, user, groups = [], name = user.replace(/[^A-Za-z0-9_-]/g, '_')) {
  const p = (f) => path.join(pki.dir, f);
  const subj = '/' + groups.map((g) => `O=${g}/`).join('') + `CN=${user}`;
  writeExt(pki.dir, 'client.ext', 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\nbasicConstraints=CA:FALSE\n');
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', p(`client-${name}.key`), '-out', p(`client-${name}.csr`), '-subj', subj], pki.dir);
  openssl(['x509', '-req', '-in', p(`client-${name}.csr`), '-CA', pki.caFile, '-CAkey', pki.caKeyFile,
    '-set_serial', String(Date.now() * 10 + (serial++ % 10)), '-days', '2', '-extfile', p('client.ext'),
    '-out', p(`client-${name}.crt`)], pki.dir);
  return {
    certFile: p(`client-${name}.crt`),
    keyFile: p(`client-${name}.key`),
    certPem: fs.readFileSync(p(`client-${name}.crt`), 'utf8'),
    keyPem: fs.readFileSync(p(`client-${name}.key`), 'utf8'),
  };
}

module.exports = { makePki, emulatorPki, issueClientCert };
