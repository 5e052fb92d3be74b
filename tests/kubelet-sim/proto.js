'use strict';
// Loads the kubelet-facing .proto files once and offers encode/decode helpers.
//
// gRPC service definitions come from @grpc/proto-loader (what grpc-js clients
// and servers consume). Decoding of DRA responses uses the protobufjs engine
// underneath proto-loader directly, because proto-loader's deserializer
// crashes on a map entry without a value, which Go decodes as an empty
// message (kubelet then treats that claim as prepared with no devices).

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// The same protobufjs copy proto-loader uses, so both agree on semantics.
const protobuf = require(require.resolve('protobufjs', {
  paths: [path.dirname(require.resolve('@grpc/proto-loader'))],
}));

const PROTO_DIR = path.resolve(__dirname, '../../proto');
const PROTO_FILES = [
  'pluginregistration.proto',
  'dra_v1alpha4.proto',
  'dra_v1beta1.proto',
  'dra_v1.proto',
  'dra_health_v1alpha1.proto',
  'dra_health_v1.proto',
];
const LOADER_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

// API id -> proto package and gRPC service. The v1alpha4 API really lives
// in proto package v1alpha3 with service "Node" (upstream-api.md §2.1).
const APIS = {
  v1alpha4: { pkg: 'v1alpha3', service: 'v1alpha3.Node', advertised: 'v1alpha3.NodeService' },
  v1beta1: {
    pkg: 'k8s.io.kubelet.pkg.apis.dra.v1beta1',
    service: 'k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin',
    advertised: 'v1beta1.DRAPlugin',
  },
  v1: {
    pkg: 'k8s.io.kubelet.pkg.apis.dra.v1',
    service: 'k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin',
    advertised: 'v1.DRAPlugin',
  },
};
for (const api of Object.values(APIS)) api.prefix = `/${api.service}/`;

const REGISTRATION_SERVICE = 'pluginregistration.Registration';
const HEALTH_SERVICE = 'v1alpha1.DRAResourceHealth';
const HEALTH_V1_SERVICE = 'v1.DRAResourceHealth';

const packageDefinition = protoLoader.loadSync(PROTO_FILES, {
  ...LOADER_OPTIONS,
  includeDirs: [PROTO_DIR],
});
const grpcObject = grpc.loadPackageDefinition(packageDefinition);

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(PROTO_DIR, path.basename(target));
root.loadSync(PROTO_FILES, { keepCase: true });
root.resolveAll();

function lookupType(fullName) {
  return root.lookupType(fullName);
}

// Full message name for an API, e.g. typeName('v1', 'Claim').
function typeName(api, message) {
  if (!APIS[api]) throw new Error(`unknown DRA API ${api}`);
  return `${APIS[api].pkg}.${message}`;
}

function encode(fullName, object) {
  const type = lookupType(fullName);
  return Buffer.from(type.encode(type.fromObject(object)).finish());
}

// Decoding as a Go peer would: map entries without a value become empty
// messages instead of null.
function decode(fullName, buffer) {
  const type = lookupType(fullName);
  const message = type.decode(buffer);
  fillNullMapValues(type, message);
  return type.toObject(message, LOADER_OPTIONS);
}

function fillNullMapValues(type, message) {
  for (const field of type.fieldsArray) {
    if (!field.map || !field.resolvedType || !message[field.name]) continue;
    const map = message[field.name];
    for (const key of Object.keys(map)) {
      if (map[key] == null) map[key] = field.resolvedType.create();
    }
  }
}

// Service definition (for grpc-js Server.addService) by full service name.
function serviceDefinition(fullServiceName) {
  const def = packageDefinition[fullServiceName];
  if (!def) throw new Error(`unknown gRPC service ${fullServiceName}`);
  return def;
}

module.exports = {
  PROTO_DIR,
  PROTO_FILES,
  LOADER_OPTIONS,
  APIS,
  REGISTRATION_SERVICE,
  HEALTH_SERVICE,
  HEALTH_V1_SERVICE,
  packageDefinition,
  grpcObject,
  root,
  lookupType,
  typeName,
  encode,
  decode,
  serviceDefinition,
};
