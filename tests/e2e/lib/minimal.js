'use strict';
// The README's minimal driver, or a build of its source, against the test
// peers as the README runs it: an API-server emulator serving node-1 and
// a kubelet simulator on a fresh kubelet root, all stopped after the test.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { KubeletSim } = require('../../kubelet-sim');
const { startEmulator, kubeconfig } = require('../../apiserver-emu');
const { makeRoot } = require('./plugin');

const DRIVER = 'minimal.example.com';

// The peers; start(bin, extra) runs a driver as `bin NODE KUBECONFIG
// KUBELET_DIR extra...` and returns { proc, stderr(), exited } (exited:
// a promise of { code, signal }). Every driver started is killed after
// the test.
async function minimalPeers(t) {
  const root = makeRoot(DRIVER);
  const emu = await startEmulator({ versions: ['v1'], nodes: ['node-1'], tokenFile: path.join(root.dir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(root.dir, 'ca.crt'));
  const kc = path.join(root.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const sim = new KubeletSim({ registryDir: root.registry }).start();
  const procs = [];
  t.after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await sim.stop(); await emu.stop(); root.cleanup();
  });
  const start = (bin, extra = []) => {
    const proc = spawn(bin, ['node-1', kc, root.dir, ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
    procs.push(proc);
    let err = '';
    proc.stderr.on('data', (b) => { err += b; });
    const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    return { proc, stderr: () => err, exited };
  };
  // A claim allocated dev-0 of node-1's pool, known to the emulator.
  const claim = (uid) => {
    const c = { namespace: 'default', name: 'c', uid };
    emu.addClaim({ ...c, allocation: { results: [{ request: 'r', driver: DRIVER, pool: 'node-1', device: 'dev-0' }] } });
    return c;
  };
  return { DRIVER, root, emu, sim, start, claim };
}

// The CDI device IDs of a claim's first device in a prepare's answer.
function cdiIds(res, uid) {
  const d = res.claims[uid].devices[0];
  return d.cdi_device_ids || d.cdiDeviceIds;
}

module.exports = { minimalPeers, cdiIds };
