#!/usr/bin/env node
'use strict';
// Standalone kube-apiserver emulator for the demo:
//
//   node tests/apiserver-emu/cli.js --dir DIR [--port N] [--versions v1,v1beta2,v1beta1]
//        [--kube-version 1.34.0] [--node NAME]... [--control-port N]
//
// Writes DIR/ca.crt, DIR/token and DIR/kubeconfig (paths relative to DIR),
// prints the URL (first line) and the control URL, and runs until SIGINT or
// SIGTERM. The control endpoint takes POST /<method> with a JSON array of
// arguments, e.g. curl -d '[{"fieldSelector":"spec.nodeName=n1"}]' $CTL/deleteSlices

const fs = require('node:fs');
const path = require('node:path');
const { startEmulator, kubeconfig } = require('./index.js');

function usage(msg) {
  if (msg) process.stderr.write(`apiserver-emu: ${msg}\n`);
  process.stderr.write('usage: cli.js --dir DIR [--port N] [--versions v1,v1beta2,v1beta1] [--kube-version X.Y.Z] [--node NAME]... [--control-port N]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const a = { nodes: [] };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = () => { if (i + 1 >= argv.length) usage(`${k} needs a value`); return argv[++i]; };
    switch (k) {
      case '--dir': a.dir = v(); break;
      case '--port': a.port = Number(v()); break;
      case '--versions': a.versions = v().split(',').map((s) => s.trim()).filter(Boolean); break;
      case '--kube-version': a.kubeVersion = v(); break;
      case '--node': a.nodes.push(v()); break;
      case '--control-port': a.controlPort = Number(v()); break;
      case '-h': case '--help': usage(); break;
      default: usage(`unknown argument ${k}`);
    }
  }
  if (!a.dir) usage('--dir is required');
  return a;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const dir = path.resolve(a.dir);
  fs.mkdirSync(dir, { recursive: true });
  const emu = await startEmulator({
    port: a.port || 0, versions: a.versions, kubeVersion: a.kubeVersion, nodes: a.nodes,
    dir: path.join(dir, 'pki'), tokenFile: path.join(dir, 'token'), controlPort: a.controlPort || 0,
  });
  fs.copyFileSync(emu.caFile, path.join(dir, 'ca.crt'));
  fs.writeFileSync(path.join(dir, 'kubeconfig'), kubeconfig({ server: emu.url }), { mode: 0o600 });
  process.stdout.write(`${emu.url}\ncontrol ${emu.controlUrl}\nkubeconfig ${path.join(dir, 'kubeconfig')}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await emu.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e) => { process.stderr.write(`apiserver-emu: ${e && e.stack || e}\n`); process.exit(1); });
