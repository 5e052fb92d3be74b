'use strict';
// examples/loop-driver running as root against the API-server emulator
// and the kubelet simulator, with --devices 2 (loop-driver.test.js,
// redteam-issue26.test.js). Returns { emu, kubelet, cdi, proc, log() }.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { KubeletSim } = require('../../kubelet-sim');
const { startEmulator, kubeconfig } = require('../../apiserver-emu');
const { BUILD, makeRoot, until, giveToNodeserver } = require('./plugin');

const LOOP_DRIVER = path.join(BUILD, 'examples', 'loop-driver');
const DRIVER = 'loop.example.com';
const NODE = 'node-1';

// Skip reasons for a test that needs it: root (loop devices, sandbox ids)
// and /dev/loop-control.
const loopSkip = () => (process.getuid() !== 0 ? 'needs root (loop devices, sandbox ids)'
  : !fs.existsSync('/dev/loop-control') ? 'no /dev/loop-control on this machine' : false);

async function startLoopDriver(t) {
  const r = makeRoot(DRIVER);
  const emu = await startEmulator({ versions: ['v1'], nodes: [NODE], tokenFile: path.join(r.dir, 'token') });
  fs.copyFileSync(emu.caFile, path.join(r.dir, 'ca.crt'));
  const kc = path.join(r.dir, 'kubeconfig');
  fs.writeFileSync(kc, kubeconfig({ server: emu.url }));
  const cdi = path.join(r.dir, 'cdi');
  const state = path.join(r.dir, 'state');
  fs.mkdirSync(cdi);
  giveToNodeserver(state);
  const proc = spawn(LOOP_DRIVER, ['--node-name', NODE, '--kubelet-dir', r.dir, '--kubeconfig', kc,
    '--cdi-dir', cdi, '--state-dir', state, '--devices', '2'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (b) => { log += b; });
  const exited = new Promise((res) => proc.on('close', (code) => res(code)));
  const env = { emu, cdi, proc, kubelet: null, log: () => log };
  t.after(async () => {
    proc.kill('SIGTERM');
    await exited;
    if (env.kubelet) await env.kubelet.stop();
    await emu.stop();
    r.cleanup();
  });
  await until(() => {
    if (proc.exitCode !== null) throw new Error(`loop-driver exited ${proc.exitCode}:\n${log}`);
    return /loop-driver: published 2 loop device/.test(log);
  }, 20000, 50);
  env.kubelet = new KubeletSim({ registryDir: r.registry }).start();
  await env.kubelet.waitForDriver(DRIVER);
  return env;
}

module.exports = { LOOP_DRIVER, DRIVER, NODE, loopSkip, startLoopDriver };
