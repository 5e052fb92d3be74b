'use strict';
// Small grpc-js helpers shared by the simulator and its tests.

const grpc = require('@grpc/grpc-js');

// Go's codes.Code String() names, used to format errors the way kubelet
// logs them ("rpc error: code = Unimplemented desc = ...").
const GO_CODE_NAMES = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound',
  'AlreadyExists', 'PermissionDenied', 'ResourceExhausted', 'FailedPrecondition',
  'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss',
  'Unauthenticated',
];

const CHANNEL_OPTIONS = {
  // Every kubelet connection is its own HTTP/2 connection; grpc-js would
  // otherwise share one subchannel between clients of the same target.
  'grpc.use_local_subchannel_pool': 1,
  // grpc-go client default; kubelet does not change it.
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
};

const identity = (b) => b;

function goStatusError(code, details) {
  const name = GO_CODE_NAMES[code] ?? `Code(${code})`;
  return `rpc error: code = ${name} desc = ${details}`;
}

// "unix:" + path, like kubelet 1.34 (grpc.NewClient("unix:" + endpoint)).
function unixTarget(socketPath) {
  return socketPath.startsWith('unix:') ? socketPath : `unix:${socketPath}`;
}

function newClient(socketPath) {
  return new grpc.Client(unixTarget(socketPath), grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
}

function waitForReady(client, timeoutMs) {
  return new Promise((resolve, reject) => {
    client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve()));
  });
}

// Unary call with raw bytes in and out. Never rejects for gRPC failures:
// resolves { code, details, buffer, metadata }.
function rawUnary(client, methodPath, buffer, deadlineMs) {
  return new Promise((resolve) => {
    const options = { deadline: Date.now() + deadlineMs };
    client.makeUnaryRequest(methodPath, identity, identity, buffer, new grpc.Metadata(), options,
      (err, response) => {
        if (err) {
          resolve({ code: err.code, details: err.details, buffer: null, metadata: err.metadata });
        } else {
          resolve({ code: grpc.status.OK, details: '', buffer: response, metadata: null });
        }
      });
  });
}

// Standalone raw call for tests: fresh connection, arbitrary path and bytes.
async function callRaw(endpoint, methodPath, buffer, deadlineMs = 5000) {
  const client = newClient(endpoint);
  try {
    return await rawUnary(client, methodPath, Buffer.from(buffer), deadlineMs);
  } finally {
    client.close();
  }
}

module.exports = {
  GO_CODE_NAMES,
  CHANNEL_OPTIONS,
  goStatusError,
  unixTarget,
  newClient,
  waitForReady,
  rawUnary,
  callRaw,
};
