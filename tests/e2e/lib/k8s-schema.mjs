// Validates rendered Kubernetes objects against the OpenAPI schemas of the
// npm package kubernetes-models (offline; ESM only, hence this module,
// loaded with import() from the CommonJS tests). Kinds the package has no
// schema for are checked structurally here: the Security Profiles
// Operator's SeccompProfile (against the fields and enums of its CRD,
// security-profiles-operator.x-k8s.io/v1beta1), and DeviceClass
// resource.k8s.io/v1beta1 and v1beta2 (the package has v1 only; their
// metadata and spec.selectors[].cel are the same shape as v1's, so they
// are validated with v1's schema).
//
// validate(obj) returns a list of problems, empty when valid.

import * as admission from 'kubernetes-models/admissionregistration.k8s.io/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as core from 'kubernetes-models/v1';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as rbac from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import * as resource from 'kubernetes-models/resource.k8s.io/v1';

const models = {
  'v1': core,
  'apps/v1': apps,
  'networking.k8s.io/v1': networking,
  'rbac.authorization.k8s.io/v1': rbac,
  'admissionregistration.k8s.io/v1': admission,
  'resource.k8s.io/v1': resource,
};

const ACTIONS = ['SCMP_ACT_KILL', 'SCMP_ACT_KILL_PROCESS', 'SCMP_ACT_KILL_THREAD', 'SCMP_ACT_TRAP',
  'SCMP_ACT_ERRNO', 'SCMP_ACT_TRACE', 'SCMP_ACT_ALLOW', 'SCMP_ACT_LOG', 'SCMP_ACT_NOTIFY'];
const ARCHES = ['SCMP_ARCH_NATIVE', 'SCMP_ARCH_X86', 'SCMP_ARCH_X86_64', 'SCMP_ARCH_X32', 'SCMP_ARCH_ARM',
  'SCMP_ARCH_AARCH64', 'SCMP_ARCH_MIPS', 'SCMP_ARCH_MIPS64', 'SCMP_ARCH_MIPS64N32', 'SCMP_ARCH_MIPSEL',
  'SCMP_ARCH_MIPSEL64', 'SCMP_ARCH_MIPSEL64N32', 'SCMP_ARCH_PPC', 'SCMP_ARCH_PPC64', 'SCMP_ARCH_PPC64LE',
  'SCMP_ARCH_S390', 'SCMP_ARCH_S390X', 'SCMP_ARCH_PARISC', 'SCMP_ARCH_PARISC64', 'SCMP_ARCH_RISCV64'];
const OPS = ['SCMP_CMP_NE', 'SCMP_CMP_LT', 'SCMP_CMP_LE', 'SCMP_CMP_EQ', 'SCMP_CMP_GE', 'SCMP_CMP_GT',
  'SCMP_CMP_MASKED_EQ'];
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function only(obj, keys, where, out) {
  for (const k of Object.keys(obj)) if (!keys.includes(k)) out.push(`${where}.${k}: unknown field`);
}

function seccompProfile(o) {
  const out = [];
  only(o, ['apiVersion', 'kind', 'metadata', 'spec'], 'SeccompProfile', out);
  if (!o.metadata || !DNS_SUBDOMAIN.test(o.metadata.name || '')) out.push('metadata.name: not a DNS subdomain');
  const s = o.spec || {};
  only(s, ['baseProfileName', 'defaultAction', 'architectures', 'listenerPath', 'listenerMetadata', 'syscalls', 'flags'],
    'spec', out);
  if (!ACTIONS.includes(s.defaultAction)) out.push(`spec.defaultAction: ${s.defaultAction} not one of the enum`);
  for (const a of s.architectures || []) if (!ARCHES.includes(a)) out.push(`spec.architectures: ${a}`);
  (s.syscalls || []).forEach((r, i) => {
    const w = `spec.syscalls[${i}]`;
    only(r, ['names', 'action', 'errnoRet', 'args'], w, out);
    if (!Array.isArray(r.names) || !r.names.length || r.names.some((n) => typeof n !== 'string')) {
      out.push(`${w}.names: a non-empty list of strings`);
    }
    if (!ACTIONS.includes(r.action)) out.push(`${w}.action: ${r.action}`);
    if (r.errnoRet !== undefined && typeof r.errnoRet !== 'string') out.push(`${w}.errnoRet: must be a string`);
    if ((r.args || []).length > 6) out.push(`${w}.args: at most 6`);
    (r.args || []).forEach((a, j) => {
      only(a, ['index', 'value', 'valueTwo', 'op'], `${w}.args[${j}]`, out);
      if (!Number.isInteger(a.index) || a.index < 0) out.push(`${w}.args[${j}].index`);
      for (const k of ['value', 'valueTwo']) {
        if (a[k] !== undefined && (!Number.isInteger(a[k]) || a[k] < 0)) out.push(`${w}.args[${j}].${k}`);
      }
      if (!OPS.includes(a.op)) out.push(`${w}.args[${j}].op: ${a.op}`);
    });
  });
  return out;
}

export function hasSchema(obj) {
  return Boolean(models[obj.apiVersion] && models[obj.apiVersion][obj.kind]);
}

export function validate(obj) {
  if (obj.apiVersion === 'security-profiles-operator.x-k8s.io/v1beta1' && obj.kind === 'SeccompProfile') {
    return seccompProfile(obj);
  }
  let o = obj;
  if (/^resource\.k8s\.io\/v1beta[12]$/.test(obj.apiVersion) && obj.kind === 'DeviceClass') {
    o = { ...obj, apiVersion: 'resource.k8s.io/v1' };
  }
  const Model = models[o.apiVersion] && models[o.apiVersion][o.kind];
  if (!Model) return [`${obj.apiVersion} ${obj.kind}: no schema here`];
  try {
    new Model(o).validate();
    return [];
  } catch (e) {
    return [e.message];
  }
}
