'use strict';
// The bytes of answers that carry nothing (issue 28, finding 5): an empty
// NodePrepareResources / NodeUnprepareResources request got status OK
// with a 1-byte uninitialized body (0x00, 0x79, 0x20 seen), which a
// generated decoder rejects. grpc-js, kubelet's stand-in, sends each
// empty request with raw bytes in and out; every answer that encodes no
// field must be 0 bytes: prepare and unprepare of every DRA version, the
// registration's NotifyRegistrationStatus, and the health stream's first
// (empty) device list. GetInfo's answer is checked to decode exactly.
//
//   KP_BUILD=build node --test --test-concurrency=1 tests/e2e/wire.test.js

const test = require('node:test');
const assert = require('node:assert/strict');
const grpc = require('@grpc/grpc-js');
const { KubeletSim, proto } = require('../kubelet-sim');
const { newClient, rawUnary } = require('../kubelet-sim/grpc-util');
const { makeRoot, TestDriver } = require('./lib/plugin');

const DRIVER = 'test.example.com';
const SERVICES = [
  '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin',
  '/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin',
  '/v1alpha3.Node',
];

async function setup(t, args = []) {
  const root = makeRoot(DRIVER);
  const drv = new TestDriver(root, ['--v1alpha4', ...args]);
  t.after(async () => {
    drv.kill();
    await drv.exited;
    root.cleanup();
  });
  await drv.ready();
  return { root, drv };
}

test('an empty prepare or unprepare request of every DRA version: status OK and a 0-byte answer', async (t) => {
  const { root, drv } = await setup(t);
  const c = newClient(root.draSock);
  t.after(() => c.close());
  for (const svc of SERVICES) {
    for (const m of ['NodePrepareResources', 'NodeUnprepareResources']) {
      // Three times: the byte sent was whatever the buffer held.
      for (let i = 0; i < 3; i++) {
        const r = await rawUnary(c, `${svc}/${m}`, Buffer.alloc(0), 10000);
        assert.equal(r.code, grpc.status.OK, `${svc}/${m}: ${r.details}`);
        assert.deepEqual([...r.buffer], [], `${svc}/${m}: the answer to an empty request is an empty message`);
      }
    }
  }
  // A request with a claim still gets its entry (the answer is not
  // just always empty now).
  const req = proto.encode(proto.typeName('v1', 'NodeUnprepareResourcesRequest'),
    { claims: [{ namespace: 'default', name: 'x', uid: '0b5b7a56-4b0e-4a3f-9d1e-111111111111' }] });
  const r = await rawUnary(c, `${SERVICES[0]}/NodeUnprepareResources`, req, 10000);
  assert.equal(r.code, grpc.status.OK, r.details);
  const dec = proto.decode(proto.typeName('v1', 'NodeUnprepareResourcesResponse'), r.buffer);
  assert.deepEqual(Object.keys(dec.claims), ['0b5b7a56-4b0e-4a3f-9d1e-111111111111']);
  assert.doesNotMatch(drv.stderr, /Sanitizer|runtime error:/);
});

test('registration: NotifyRegistrationStatus answers 0 bytes, GetInfo an answer that decodes exactly; the health stream\'s empty list is 0 bytes', async (t) => {
  const { root } = await setup(t);
  const reg = newClient(root.regSock);
  t.after(() => reg.close());
  const status = proto.encode('pluginregistration.RegistrationStatus', { plugin_registered: true });
  const n = await rawUnary(reg, '/pluginregistration.Registration/NotifyRegistrationStatus', status, 10000);
  assert.equal(n.code, grpc.status.OK, n.details);
  assert.deepEqual([...n.buffer], []);
  const info = await rawUnary(reg, '/pluginregistration.Registration/GetInfo', Buffer.alloc(0), 10000);
  assert.equal(info.code, grpc.status.OK, info.details);
  const pi = proto.decode('pluginregistration.PluginInfo', info.buffer);
  assert.equal(pi.name, DRIVER);
  // Re-encoded, the same bytes: nothing trails the message.
  assert.deepEqual(proto.encode('pluginregistration.PluginInfo', pi), info.buffer);

  // The health stream's first message: the complete (empty) list.
  const c = newClient(root.draSock);
  t.after(() => c.close());
  const first = await new Promise((resolve, reject) => {
    const call = c.makeServerStreamRequest('/v1.DRAResourceHealth/NodeWatchResources', (b) => b, (b) => b,
      Buffer.alloc(0), new grpc.Metadata(), { deadline: Date.now() + 10000 });
    call.on('data', (b) => { resolve(b); call.cancel(); });
    call.on('error', (e) => { if (e.code !== grpc.status.CANCELLED) reject(e); });
  });
  assert.deepEqual([...first], []);
});
