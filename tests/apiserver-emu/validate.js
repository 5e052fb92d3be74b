'use strict';
// Server-side validation of ResourceSlices, after
// kubernetes/pkg/apis/resource/validation (1.32 baseline; later releases'
// differences keyed on the emulated minor version). Messages and field paths
// follow apimachinery's validation helpers so clients see the same causes.
//
// ctx: { minor, version, old (internal object on update) }

const { isDeepStrictEqual } = require('node:util');
const E = require('./errors.js');
const Q = require('./quantity.js');

const LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const LABEL_RE = new RegExp(`^${LABEL_FMT}$`);
const SUBDOMAIN_FMT = `${LABEL_FMT}(\\.${LABEL_FMT})*`;
const SUBDOMAIN_RE = new RegExp(`^${SUBDOMAIN_FMT}$`);
const CID_FMT = '[A-Za-z_][A-Za-z0-9_]*';
const CID_RE = new RegExp(`^${CID_FMT}$`);
const QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QNAME_RE = new RegExp(`^${QNAME_FMT}$`);

// RegexError reproduces apimachinery's odd "'a',  or 'b', " example list.
function regexError(msg, fmt, ...examples) {
  if (!examples.length) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}
const maxLenError = (n) => `must be no more than ${n} characters`;

function isDNS1123Label(v) {
  const errs = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!LABEL_RE.test(v)) {
    if (SUBDOMAIN_RE.test(v)) errs.push('must not contain dots');
    else errs.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

function isDNS1123Subdomain(v) {
  const errs = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!SUBDOMAIN_RE.test(v)) errs.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

function isCIdentifier(v) {
  if (CID_RE.test(v)) return [];
  return [regexError("a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'", CID_FMT, 'my_name', 'MY_NAME', 'MyName')];
}

// IsQualifiedName, used for label and annotation keys.
function isQualifiedName(v) {
  const errs = [];
  const parts = v.split('/');
  let name;
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) {
    const [prefix] = parts;
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of isDNS1123Subdomain(prefix)) errs.push('prefix part ' + m);
  } else {
    return [regexError("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QNAME_FMT, 'MyName', 'my.name', '123-abc') + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part ' + maxLenError(63));
  if (name.length && !QNAME_RE.test(name)) errs.push('name part ' + regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QNAME_FMT, 'MyName', 'my.name', '123-abc'));
  return errs;
}

function isValidLabelValue(v) {
  const errs = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (v.length && !QNAME_RE.test(v)) errs.push(regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", '(' + QNAME_FMT + ')?', 'MyValue', 'my_value', '12345'));
  return errs;
}

// NameIsDNSSubdomain with prefix=true masks one trailing dash, as generateName
// prefixes may end in "-".
function nameIsDNSSubdomain(name, prefix) {
  if (prefix && name.endsWith('-')) name = name.slice(0, -1) + 'a';
  return isDNS1123Subdomain(name);
}

// ValidateCSIDriverName: note the Required *and* regex error for "".
function validateDriverName(v, path) {
  const errs = [];
  if (v.length === 0) errs.push(E.required(path));
  if (v.length > 63) errs.push(E.tooLong(path, 63));
  for (const m of isDNS1123Subdomain(v.toLowerCase())) errs.push(E.invalid(path, v, m));
  return errs;
}

function validatePoolName(name, path) {
  if (name === '') return [E.required(path)];
  const errs = [];
  if (name.length > 253) errs.push(E.tooLong(path, 253));
  for (const part of name.split('/')) for (const m of isDNS1123Subdomain(part)) errs.push(E.invalid(path, part, m));
  return errs;
}

function validateObjectMeta(meta, { generatedFrom } = {}) {
  const errs = [];
  if (generatedFrom) for (const m of nameIsDNSSubdomain(generatedFrom, true)) errs.push(E.invalid('metadata.generateName', generatedFrom, m));
  if (!meta.name) errs.push(E.required('metadata.name', 'name or generateName is required'));
  else for (const m of nameIsDNSSubdomain(meta.name, false)) errs.push(E.invalid('metadata.name', meta.name, m));
  if ((meta.generation || 0) < 0) errs.push(E.invalid('metadata.generation', meta.generation, 'must be greater than or equal to 0'));
  for (const [k, v] of Object.entries(meta.labels || {})) {
    for (const m of isQualifiedName(k)) errs.push(E.invalid('metadata.labels', k, m));
    for (const m of isValidLabelValue(v)) errs.push(E.invalid(`metadata.labels`, v, m));
  }
  let annSize = 0;
  for (const [k, v] of Object.entries(meta.annotations || {})) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(E.invalid('metadata.annotations', k, m));
    annSize += k.length + v.length;
  }
  if (annSize > 256 * 1024) errs.push(E.tooLong('metadata.annotations', 256 * 1024));
  const refs = meta.ownerReferences || [];
  let controllers = 0;
  for (const r of refs) {
    const gv = r.apiVersion || '';
    if (!gv) errs.push(E.invalid('metadata.ownerReferences.apiVersion', gv, 'version must not be empty'));
    if (!r.kind) errs.push(E.invalid('metadata.ownerReferences.kind', r.kind || '', 'kind must not be empty'));
    if (!r.name) errs.push(E.invalid('metadata.ownerReferences.name', r.name || '', 'name must not be empty'));
    if (!r.uid) errs.push(E.invalid('metadata.ownerReferences.uid', r.uid || '', 'uid must not be empty'));
    if (r.controller) controllers++;
  }
  if (controllers > 1) {
    const who = refs.filter((r) => r.controller).map((r) => `${r.kind}/${r.name}`).join(', ');
    errs.push(E.invalid('metadata.ownerReferences', refs, `Only one reference can have Controller set to true. Found "true" in references for ${who}`));
  }
  return errs;
}

function validateMetaUpdate(meta, old) {
  const errs = [];
  if (meta.name !== old.name) errs.push(E.invalid('metadata.name', meta.name, 'field is immutable'));
  if (meta.uid && meta.uid !== old.uid) errs.push(E.invalid('metadata.uid', meta.uid, 'field is immutable'));
  if ((meta.generation || 0) < 0) errs.push(E.invalid('metadata.generation', meta.generation, 'must be greater than or equal to 0'));
  return errs;
}

const SEMVER_RE = new RegExp('^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)'
  + '(-(0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(\\.(0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?'
  + '(\\+[0-9a-zA-Z-]+(\\.[0-9a-zA-Z-]+)*)?$');

function byteLen(s) { return Buffer.byteLength(s, 'utf8'); }

function validateCIdentifier(id, path, legacy) {
  const errs = [];
  if (byteLen(id) > 32) errs.push(E.tooLong(path, 32));
  // 1.32 reports these as TypeInvalid; the cause reason differs, the text not.
  for (const m of isCIdentifier(id)) errs.push(legacy ? { ...E.invalid(path, id, m), type: 'TypeInvalid' } : E.invalid(path, id, m));
  return errs;
}

// strict: the 1.38 rule (PR #141644) that a name has at most one '/'.
function validateQualifiedName(name, path, legacy, strict) {
  if (legacy && name === '') return [E.required(path, 'name required')];
  const parts = name.split('/');
  const errs = [];
  if (strict && parts.length > 2) return [E.invalid(path, name, 'a qualified name must not contain more than one \'/\'')];
  if (parts.length === 1) errs.push(...validateCIdentifier(parts[0], path, legacy));
  else if (parts.length === 2) {
    if (parts[0] === '') errs.push(legacy ? E.required(path, 'the domain must not be empty') : E.invalid(path, '', 'the domain must not be empty'));
    else errs.push(...validateDriverName(parts[0], path));
    if (parts[1] === '') errs.push(legacy ? E.required(path, 'the name must not be empty') : E.invalid(path, '', 'the name must not be empty'));
    else errs.push(...validateCIdentifier(parts[1], path, legacy));
  }
  // Upstream quirk before 1.38: three or more parts are not validated.
  return errs;
}

function truncateKey(k, max = 96) {
  if (k.length <= max) return k;
  const remaining = max - 3;
  return k.slice(0, Math.floor((remaining + 1) / 2)) + '...' + k.slice(k.length - Math.floor(remaining / 2));
}

function validateAttribute(a, path, minor) {
  const errs = [];
  let n = 0;
  if (a.bool !== undefined) n++;
  if (a.int !== undefined) n++;
  if (a.string !== undefined) {
    n++;
    if (byteLen(a.string) > 64) errs.push(E.tooLong(`${path}.string`, 64));
  }
  if (a.version !== undefined) {
    n++;
    if (!SEMVER_RE.test(a.version)) errs.push(E.invalid(`${path}.version`, a.version, 'must be a string compatible with semver.org spec 2.0.0'));
    if (byteLen(a.version) > 64) errs.push(E.tooLong(`${path}.version`, 64));
  }
  // List types (1.36, DRAListTypeAttributes).
  for (const t of ['ints', 'bools', 'strings', 'versions']) {
    if (a[t] === undefined || minor < 36) continue;
    n++;
    if (a[t].length === 0) errs.push(E.required(`${path}.${t}`, 'a list needs at least one value'));
    if (t === 'strings') a[t].forEach((x, i) => { if (byteLen(x) > 64) errs.push(E.tooLong(`${path}.strings[${i}]`, 64)); });
    if (t === 'versions') a[t].forEach((x, i) => { if (!SEMVER_RE.test(x)) errs.push(E.invalid(`${path}.versions[${i}]`, x, 'must be a string compatible with semver.org spec 2.0.0')); });
  }
  if (n === 0) errs.push(minor >= 35 ? E.invalid(path, '', 'exactly one value must be specified') : E.required(path, 'exactly one value must be specified'));
  else if (n > 1) errs.push(E.invalid(path, a, 'exactly one value must be specified'));
  return errs;
}

function validateNodeSelector(ns, path) {
  const errs = [];
  const terms = ns.nodeSelectorTerms || [];
  terms.forEach((t, i) => {
    for (const [kind, list] of [['matchExpressions', t.matchExpressions || []], ['matchFields', t.matchFields || []]]) {
      list.forEach((r, j) => {
        const p = `${path}.nodeSelectorTerms[${i}].${kind}[${j}]`;
        const ops = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
        if (!ops.includes(r.operator)) errs.push(E.invalid(`${p}.operator`, r.operator || '', 'not a valid selector operator'));
        if (kind === 'matchExpressions') for (const m of isQualifiedName(r.key || '')) errs.push(E.invalid(`${p}.key`, r.key || '', m));
      });
    }
  });
  if (terms.length !== 1) errs.push(E.invalid(`${path}.nodeSelectorTerms`, terms, 'must have exactly one node selector term'));
  return errs;
}

// validateSet: item checks, size limit, duplicates. Before 1.34 the size error
// is appended after the item errors; later it short-circuits (DoS guard).
function validateSet(items, max, validateItem, key, path, { minor, dupChild }) {
  const errs = [];
  if (minor >= 34 && items.length > max) return [E.tooMany(path, items.length, max)];
  items.forEach((it, i) => errs.push(...validateItem(it, `${path}[${i}]`)));
  if (minor < 34 && items.length > max) errs.push(E.tooMany(path, items.length, max));
  const seen = new Set();
  items.forEach((it, i) => {
    const k = key(it);
    if (seen.has(k)) errs.push(E.duplicate(dupChild ? `${path}[${i}].${dupChild}` : `${path}[${i}]`, k));
    else seen.add(k);
  });
  return errs;
}

// validateRequestPolicy is the 1.37 server's (pkg/apis/resource/validation
// validateRequestPolicy and helpers): validValues or validRange against the
// default and the capacity value.
function qValue(q) {
  if (q.e >= 0) return q.u * 10n ** BigInt(q.e);
  const div = 10n ** BigInt(-q.e);
  let r = q.u / div;
  if (q.u % div !== 0n) r += q.u < 0n ? -1n : 1n;
  return r;
}
function validateRequestPolicy(capValue, p, path) {
  const errs = [];
  let cap;
  const qp = (v) => Q.parse(String(v));
  try { cap = qp(capValue); } catch { return errs; }
  const vv = p.validValues || [];
  if (vv.length && p.validRange) {
    errs.push(E.forbiddenField(path, 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time'));
    return errs;
  }
  try {
    if (vv.length) {
      if (p.default === undefined) { errs.push(E.required(`${path}.default`, 'required when validValues is defined')); return errs; }
      const def = qp(p.default);
      const qs = vv.map(qp);
      for (let i = 0; i + 1 < qs.length; i++) if (Q.cmp(qs[i], qs[i + 1]) > 0) errs.push(E.invalid(`${path}.validValues[${i + 1}]`, vv[i + 1], 'values must be sorted in ascending order'));
      if (qs.length > 10) { errs.push(E.tooMany(`${path}.validValues`, qs.length, 10)); return errs; }
      // validateSet: every item, then duplicates (by integer value).
      let found = false;
      qs.forEach((q, i) => {
        if (Q.cmp(q, cap) > 0) errs.push(E.invalid(`${path}.validValues[${i}]`, vv[i], `option is larger than capacity value: ${capValue}`));
        if (Q.cmp(q, def) === 0) found = true;
      });
      const seen = new Set();
      qs.forEach((q, i) => {
        const k = String(qValue(q));
        if (seen.has(k)) errs.push(E.duplicate(`${path}.validValues[${i}]`, vv[i])); else seen.add(k);
      });
      if (!found) errs.push(E.invalid(`${path}.validValues`, p.default, 'default value is not valid according to the requestPolicy'));
    } else if (p.validRange) {
      const r = p.validRange;
      const rp = `${path}.validRange`;
      if (p.default === undefined) { errs.push(E.required(`${path}.default`, 'required when validRange is defined')); return errs; }
      if (r.min === undefined) { errs.push(E.required(`${rp}.min`, 'required when validRange is defined')); return errs; }
      const def = qp(p.default);
      const min = qp(r.min);
      if (Q.cmp(min, cap) > 0) errs.push(E.invalid(`${rp}.min`, r.min, `min is larger than capacity value: ${capValue}`));
      if (Q.cmp(def, min) < 0) errs.push(E.invalid(`${rp}.min`, p.default, `default is less than min: ${r.min}`));
      if (r.max !== undefined) {
        const max = qp(r.max);
        if (Q.cmp(min, max) > 0) errs.push(E.invalid(`${rp}.max`, r.min, `min is larger than max: ${r.max}`));
        if (Q.cmp(max, cap) > 0) errs.push(E.invalid(`${rp}.max`, r.max, `max is larger than capacity value: ${capValue}`));
        if (Q.cmp(def, max) > 0) errs.push(E.invalid(`${rp}.max`, p.default, `default is more than max: ${r.max}`));
      }
      if (r.step !== undefined) {
        const step = qp(r.step);
        const e = Math.min(min.e, step.e);
        const sum = { u: min.u * 10n ** BigInt(min.e - e) + step.u * 10n ** BigInt(step.e - e), e };
        if (Q.cmp(sum, cap) > 0) errs.push(E.invalid(`${rp}.step`, r.step, `one step is larger than capacity value: ${capValue}`));
        const sv = qValue(step);
        // The server divides by it; Go panics on zero (a 500, not a 422).
        if (sv === 0n) throw new Error('integer divide by zero');
        const mult = (v, s) => { if ((qValue(qp(v)) - qValue(min)) % sv !== 0n) errs.push(E.invalid(`${rp}.step`, s, `value is not a multiple of a given step (${r.step}) from (${r.min})`)); };
        mult(p.default, p.default);
        if (r.max !== undefined) mult(r.max, r.max);
      }
    }
  } catch (e) {
    if (e instanceof Q.QuantityError) return errs;
    throw e;
  }
  return errs;
}

function validateDevice(d, path, ctx, spec) {
  const legacy = ctx.minor <= 32;
  const errs = [];
  errs.push(...isDNS1123Label(d.name).map((m) => E.invalid(`${path}.name`, d.name, m)));
  let base = path;
  if (legacy && ctx.version === 'v1beta1') {
    if (d._noBasic) { errs.push(E.required(`${path}.basic`)); return errs; }
    base = `${path}.basic`;
  }
  const attrs = d.attributes || {};
  const caps = d.capacity || {};
  const total = Object.keys(attrs).length + Object.keys(caps).length;
  const countErr = total > 32 ? [E.invalid(base, total, 'the total number of attributes and capacities must not exceed 32')] : [];
  if (!legacy) errs.push(...countErr);
  for (const [k, a] of Object.entries(attrs)) {
    const p = `${base}.attributes[${truncateKey(k)}]`;
    errs.push(...validateQualifiedName(k, p, legacy, ctx.strictNames), ...validateAttribute(a, p, ctx.minor));
  }
  for (const [k, c] of Object.entries(caps)) {
    const p = `${base}.capacity[${truncateKey(k)}]`;
    errs.push(...validateQualifiedName(k, p, legacy, ctx.strictNames));
    if (c.requestPolicy !== undefined && !d.allowMultipleAllocations) errs.push(E.forbiddenField(`${p}.requestPolicy`, 'allowMultipleAllocations must be true'));
    else if (c.requestPolicy) errs.push(...validateRequestPolicy(c.value, c.requestPolicy, `${p}.requestPolicy`));
  }
  if (legacy) errs.push(...countErr);
  const listValues = Object.values(attrs).reduce((n, a) => n + ['ints', 'bools', 'strings', 'versions'].reduce((m, t) => m + (a[t] ? a[t].length : 0), 0), 0);
  if (listValues > 48) errs.push(E.tooMany(`${base}.attributes`, listValues, 48));
  if ((d.consumesCounters || []).length > (ctx.minor >= 35 ? 2 : 32)) errs.push(E.tooMany(`${base}.consumesCounters`, d.consumesCounters.length, ctx.minor >= 35 ? 2 : 32));
  for (const f of ['bindingConditions', 'bindingFailureConditions']) if ((d[f] || []).length > 4) errs.push(E.tooMany(`${base}.${f}`, d[f].length, 4));
  if ((d.taints || []).length > (ctx.minor >= 35 ? 16 : 4)) errs.push(E.tooMany(`${base}.taints`, d.taints.length, ctx.minor >= 35 ? 16 : 4));
  (d.taints || []).forEach((t, i) => {
    const p = `${base}.taints[${i}]`;
    for (const m of isQualifiedName(t.key || '')) errs.push(E.invalid(`${p}.key`, t.key || '', m));
    if (t.value) for (const m of isValidLabelValue(t.value)) errs.push(E.invalid(`${p}.value`, t.value, m));
    const effects = ctx.minor >= 36 ? ['NoSchedule', 'NoExecute', 'None'] : ['NoSchedule', 'NoExecute'];
    if (!t.effect) errs.push(E.required(`${p}.effect`));
    else if (!effects.includes(t.effect)) errs.push(E.notSupported(`${p}.effect`, t.effect, effects));
  });
  const perDevice = spec.perDeviceNodeSelection === true;
  const hasSel = d.nodeName !== undefined || d.nodeSelector !== undefined || d.allNodes !== undefined;
  if (perDevice) {
    const set = [];
    if (d.nodeName !== undefined) {
      if (d.nodeName) { set.push('`nodeName`'); errs.push(...isDNS1123Subdomain(d.nodeName).map((m) => E.invalid(`${base}.nodeName`, d.nodeName, m))); } else errs.push(E.invalid(`${base}.nodeName`, '', 'must not be empty'));
    }
    // Any number of terms before 1.38; exactly one from 1.38 (PR
    // #141213), as the slice-level selector.
    if (d.nodeSelector !== undefined) { set.push('`nodeSelector`'); errs.push(...validateNodeSelector(d.nodeSelector, `${base}.nodeSelector`).filter((e) => ctx.minor >= 38 || !e.field.endsWith('nodeSelectorTerms'))); }
    if (d.allNodes !== undefined) { if (d.allNodes) set.push('`allNodes`'); else errs.push(E.invalid(`${base}.allNodes`, false, 'must be either unset or set to true')); }
    const msg = 'exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec';
    if (set.length === 0) errs.push(E.required(path, msg));
    else if (set.length > 1) errs.push(E.invalid(path, `{${set.join(', ')}}`, msg));
  } else if (hasSel) {
    errs.push(E.invalid(path, null, '`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec'));
  }
  return errs;
}

// validateSlice returns field errors for a create (ctx.old undefined) or an
// update of the internal object.
function validateSlice(o, ctx) {
  const { minor } = ctx;
  const old = ctx.old;
  // 1.38's name rule ratchets: an update that leaves spec.devices as it
  // is stays valid with the names it has.
  ctx = { ...ctx, strictNames: minor >= 38 && !(old && isDeepStrictEqual(o.spec.devices, old.spec.devices)) };
  const errs = [];
  errs.push(...(old ? validateMetaUpdate(o.metadata, old.metadata) : []));
  errs.push(...validateObjectMeta(o.metadata, { generatedFrom: ctx.generatedFrom }));
  const s = o.spec;
  errs.push(...validateDriverName(s.driver, 'spec.driver'));
  errs.push(...validatePoolName(s.pool.name, 'spec.pool.name'));
  if (s.pool.resourceSliceCount <= 0) errs.push(E.invalid('spec.pool.resourceSliceCount', s.pool.resourceSliceCount, 'must be greater than zero'));
  if (s.pool.generation < 0) errs.push(E.invalid('spec.pool.generation', s.pool.generation, 'must be greater than or equal to zero'));
  if (old) {
    const os = old.spec;
    if (s.pool.name !== os.pool.name) errs.push(E.invalid('spec.pool.name', s.pool.name, 'field is immutable'));
    if (s.driver !== os.driver) errs.push(E.invalid('spec.driver', s.driver, 'field is immutable'));
    if ((s.nodeName ?? null) !== (os.nodeName ?? null)) errs.push(E.invalid('spec.nodeName', s.nodeName ?? (minor <= 32 ? '' : null), 'field is immutable'));
  }
  const set = [];
  if (s.nodeName !== undefined) {
    if (s.nodeName !== '') {
      set.push('`nodeName`');
      for (const m of isDNS1123Subdomain(s.nodeName)) errs.push(E.invalid('spec.nodeName', s.nodeName, m));
    } else errs.push(E.invalid('spec.nodeName', '', 'must be either unset or set to a non-empty string'));
  }
  if (s.nodeSelector !== undefined) { set.push('`nodeSelector`'); errs.push(...validateNodeSelector(s.nodeSelector, 'spec.nodeSelector')); }
  if (s.allNodes !== undefined) {
    if (s.allNodes) set.push('`allNodes`');
    else errs.push(E.invalid('spec.allNodes', false, 'must be either unset or set to true'));
  }
  if (s.perDeviceNodeSelection !== undefined) {
    if (s.perDeviceNodeSelection) set.push('`perDeviceNodeSelection`');
    else errs.push(E.invalid('spec.perDeviceNodeSelection', false, 'must be either unset or set to true'));
  }
  const choices = minor >= 33 ? '`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`' : '`nodeName`, `nodeSelector`, or `allNodes`';
  if (set.length === 0) errs.push(E.required('spec', `exactly one of ${choices} is required`));
  else if (set.length > 1) errs.push(E.invalid('spec', `{${set.join(', ')}}`, `exactly one of ${choices} is required, but multiple fields are set`));
  const devices = s.devices || [];
  if (minor >= 35 && s.sharedCounters && s.sharedCounters.length && devices.length) {
    errs.push(E.invalid('spec', '', 'only one of `sharedCounters` or `devices` is allowed'));
  }
  let maxDevices = 128;
  const advanced = (d) => (d.taints || []).length || (d.consumesCounters || []).length ||
    (minor >= 36 && Object.values(d.attributes || {}).some((a) => a.ints || a.bools || a.strings || a.versions));
  if (minor >= 35 && devices.some(advanced)) maxDevices = 64;
  if (minor >= 35 && (s.sharedCounters || []).length > 8) errs.push(E.tooMany('spec.sharedCounters', s.sharedCounters.length, 8));
  errs.push(...validateSet(devices, maxDevices, (d, p) => validateDevice(d, p, ctx, s), (d) => d.name, 'spec.devices',
    { minor, dupChild: minor <= 33 ? 'name' : '' }));
  (s.sharedCounters || []).forEach((cs, i) => {
    const p = `spec.sharedCounters[${i}]`;
    if (!cs.name) errs.push(E.required(`${p}.name`));
    else for (const m of isDNS1123Label(cs.name)) errs.push(E.invalid(`${p}.name`, cs.name, m));
    for (const k of Object.keys(cs.counters || {})) for (const m of isDNS1123Label(k)) errs.push(E.invalid(`${p}.counters[${k}]`, k, m));
    if (minor >= 35 && Object.keys(cs.counters || {}).length > 32) errs.push(E.tooMany(`${p}.counters`, Object.keys(cs.counters).length, 32));
  });
  return errs;
}

module.exports = { validateSlice, isDNS1123Subdomain, isDNS1123Label, nameIsDNSSubdomain, isQualifiedName };
