'use strict';
// metav1.Status bodies and field.Error rendering, shaped like
// k8s.io/apimachinery/pkg/api/errors and pkg/util/validation/field so that
// messages match byte for byte where clients (or people) read them.

const GROUP = 'resource.k8s.io';

// status builds a Status with Go's field order (kind, apiVersion, metadata,
// status, message, reason, details, code); empty reason/details are omitted.
function status(code, reason, message, details) {
  const s = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure' };
  if (message) s.message = message;
  if (reason) s.reason = reason;
  if (details) s.details = details;
  s.code = code;
  return s;
}

// details mirrors StatusDetails: empty fields are omitted (omitempty).
function details({ name, group, kind, uid, causes, retryAfterSeconds } = {}) {
  const d = {};
  if (name) d.name = name;
  if (group) d.group = group;
  if (kind) d.kind = kind;
  if (uid) d.uid = uid;
  if (causes && causes.length) d.causes = causes;
  if (retryAfterSeconds) d.retryAfterSeconds = retryAfterSeconds;
  return d;
}

function qualified(resource, group) { return group ? `${resource}.${group}` : resource; }

function notFound(resource, name, group = GROUP) {
  return status(404, 'NotFound', `${qualified(resource, group)} "${name}" not found`,
    details({ name, group, kind: resource }));
}

function alreadyExists(resource, name, group = GROUP) {
  return status(409, 'AlreadyExists', `${qualified(resource, group)} "${name}" already exists`,
    details({ name, group, kind: resource }));
}

const OPTIMISTIC_LOCK = 'the object has been modified; please apply your changes to the latest version and try again';

// conflict is errors.NewConflict: "Operation cannot be fulfilled on <gr> "<name>": <err>".
function conflict(resource, name, msg = OPTIMISTIC_LOCK, group = GROUP) {
  return status(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": ${msg}`,
    details({ name, group, kind: resource }));
}

function badRequest(message) { return status(400, 'BadRequest', message); }

function internalError(message) {
  // A non-Status error inside the server becomes reason "" (omitted), code 500.
  return status(500, '', message);
}

function expired(message) { return status(410, 'Expired', message); }

function unauthorized() { return status(401, 'Unauthorized', 'Unauthorized'); }

function forbidden(message, { name, group, kind } = {}) {
  return status(403, 'Forbidden', message, details({ name, group, kind }));
}

function methodNotAllowed(verb) {
  return status(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
}

// --- field errors ------------------------------------------------------------

const TYPES = {
  Required: ['FieldValueRequired', 'Required value'],
  Invalid: ['FieldValueInvalid', 'Invalid value'],
  Duplicate: ['FieldValueDuplicate', 'Duplicate value'],
  TooLong: ['FieldValueTooLong', 'Too long'],
  TooMany: ['FieldValueTooMany', 'Too many'],
  Forbidden: ['FieldValueForbidden', 'Forbidden'],
  NotSupported: ['FieldValueNotSupported', 'Unsupported value'],
};

const OMIT = Symbol('omit');

function fe(type, field, badValue, detail = '') { return { type, field, badValue, detail }; }
const required = (f, d = '') => fe('Required', f, OMIT, d);
const invalid = (f, v, d = '') => fe('Invalid', f, v, d);
const duplicate = (f, v) => fe('Duplicate', f, v);
const forbiddenField = (f, d = '') => fe('Forbidden', f, OMIT, d);
function tooLong(f, max) {
  return fe('TooLong', f, OMIT, max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long');
}
function tooMany(f, actual, max) {
  return fe('TooMany', f, actual >= 0 ? actual : OMIT, `must have at most ${max} ${max === 1 ? 'item' : 'items'}`);
}
function notSupported(f, v, valid) {
  return fe('NotSupported', f, v, 'supported values: ' + valid.map((x) => JSON.stringify(x)).join(', '));
}

// goValue approximates fmt's %q / %v for the values we report.
function goValue(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

// errorBody is field.Error.ErrorBody(): the text without the field path.
function errorBody(e) {
  const [, text] = TYPES[e.type];
  let s;
  if (['Required', 'Forbidden', 'TooLong'].includes(e.type) || e.badValue === OMIT) s = text;
  else s = `${text}: ${goValue(e.badValue)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

function errorString(e) { return `${e.field}: ${errorBody(e)}`; }

// invalidStatus is errors.NewInvalid(groupKind, name, errs): 422 with causes;
// the message aggregates like utilerrors.NewAggregate (deduplicated, brackets
// only for more than one error).
function invalidStatus(kind, name, errs, group = GROUP) {
  const causes = errs.map((e) => ({ reason: TYPES[e.type][0], message: errorBody(e), field: e.field }));
  const msgs = [];
  for (const e of errs) { const m = errorString(e); if (!msgs.includes(m)) msgs.push(m); }
  const agg = msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
  return status(422, 'Invalid', `${qualified(kind, group)} "${name}" is invalid: ${agg}`,
    details({ name, group, kind, causes }));
}

module.exports = {
  GROUP, status, details, notFound, alreadyExists, conflict, badRequest, internalError, expired,
  unauthorized, forbidden, methodNotAllowed, OPTIMISTIC_LOCK,
  required, invalid, duplicate, forbiddenField, tooLong, tooMany, notSupported, OMIT,
  errorBody, errorString, invalidStatus,
};
