'use strict';
// Concurrent load on a running plugin with @grpc/grpc-js: `clients`
// connections (8 by default) share `calls` calls (10 000), mostly
// NodePrepareResources / NodeUnprepareResources on the DRA socket plus one
// GetInfo on the registration socket in every 20. Lock contention in the
// gRPC core shows syscalls a quiet run never makes (sched_yield,
// clock_nanosleep, ...): the seccomp allowlists are measured under it.
//
//   node tests/e2e/stress.js <dra.sock> <reg.sock> [clients] [calls]

const { randomUUID } = require('node:crypto');
const { proto } = require('../kubelet-sim');
const { newClient, waitForReady, rawUnary } = require('../kubelet-sim/grpc-util');

const DRA = '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/';
const GETINFO = '/pluginregistration.Registration/GetInfo';

async function stress({ draSock, regSock, clients = 8, calls = 10000, deadlineMs = 20000 }) {
  const prepType = proto.typeName('v1', 'NodePrepareResourcesRequest');
  const unprepType = proto.typeName('v1', 'NodeUnprepareResourcesRequest');
  const stats = { ok: 0, failed: 0, codes: {}, ms: 0 };
  let next = 0;
  const start = Date.now();
  async function worker(k) {
    const dra = newClient(draSock);
    const reg = newClient(regSock);
    try {
      await waitForReady(dra, 5000);
      await waitForReady(reg, 5000);
      for (let i = next++; i < calls; i = next++) {
        let r;
        if (i % 20 === 19) {
          r = await rawUnary(reg, GETINFO, Buffer.alloc(0), deadlineMs);
        } else {
          const claim = { namespace: 'default', name: `stress-${k}-${i % 7}`, uid: randomUUID() };
          const type = i % 2 ? unprepType : prepType;
          const method = i % 2 ? 'NodeUnprepareResources' : 'NodePrepareResources';
          r = await rawUnary(dra, DRA + method, proto.encode(type, { claims: [claim] }), deadlineMs);
        }
        if (r.code === 0) stats.ok++;
        else {
          stats.failed++;
          stats.codes[r.code] = (stats.codes[r.code] || 0) + 1;
        }
      }
    } finally {
      dra.close();
      reg.close();
    }
  }
  await Promise.all(Array.from({ length: clients }, (_, k) => worker(k)));
  stats.ms = Date.now() - start;
  return stats;
}

module.exports = { stress };

if (require.main === module) {
  const [draSock, regSock, clients, calls] = process.argv.slice(2);
  stress({ draSock, regSock, clients: Number(clients || 8), calls: Number(calls || 10000) })
    .then((s) => { console.log(JSON.stringify(s)); process.exit(s.failed ? 1 : 0); });
}
