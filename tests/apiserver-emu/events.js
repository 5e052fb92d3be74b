'use strict';
// events.k8s.io/v1 Events as kube-apiserver serves them: create (POST),
// get, list, merge/JSON patch (the series of a repeated Event), delete;
// validation as pkg/apis/core/validation/events.go ValidateEventCreate and
// ValidateEventUpdate for the v1 API (required eventTime,
// reportingController as a qualified name, reportingInstance, action and
// reason at most 128 bytes, type Normal or Warning, note at most 1 kB, no
// deprecated fields, series.count >= 2 with lastObservedTime; the
// namespace of an Event about a cluster-scoped object is "default" or
// "kube-system"; immutable fields on update).

const crypto = require('node:crypto');
const E = require('./errors');
const { isDNS1123Subdomain, isQualifiedName } = require('./validate');

const GROUP = 'events.k8s.io';
const LIMIT = 128;
const NOTE_LIMIT = 1024;
const IMMUTABLE = ['regarding', 'reason', 'note', 'type', 'eventTime', 'action', 'related', 'reportingController',
  'reportingInstance', 'deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount'];

const clone = (o) => (o === undefined ? undefined : JSON.parse(JSON.stringify(o)));
const isTime = (t) => typeof t === 'string' && t !== '' && !Number.isNaN(Date.parse(t));

function validateSeries(ev, errs) {
  if (ev.series == null) return;
  if (!Number.isInteger(ev.series.count) || ev.series.count < 2) errs.push(E.invalid('series.count', '', 'should be at least 2'));
  if (!isTime(ev.series.lastObservedTime)) errs.push(E.required('series.lastObservedTime'));
}

// ValidateEventCreate for events.k8s.io/v1.
function validateCreate(ev, ns) {
  const errs = [];
  const meta = ev.metadata || {};
  if (!meta.name && !meta.generateName) errs.push(E.required('metadata.name', 'name or generateName is required'));
  if (meta.name) for (const m of isDNS1123Subdomain(meta.name)) errs.push(E.invalid('metadata.name', meta.name, m));
  const reg = ev.regarding || {};
  if (!reg.namespace && ns !== 'default' && ns !== 'kube-system') {
    errs.push(E.invalid('involvedObject.namespace', reg.namespace || '', 'does not match event.namespace'));
  }
  if (reg.namespace && reg.namespace !== ns) errs.push(E.invalid('involvedObject.namespace', reg.namespace, 'does not match event.namespace'));
  const rc = ev.reportingController || '';
  if (!rc) errs.push(E.required('reportingController'));
  for (const m of isQualifiedName(rc)) errs.push(E.invalid('reportingController', rc, m));
  const ri = ev.reportingInstance || '';
  if (!ri) errs.push(E.required('reportingInstance'));
  if (ri.length > LIMIT) errs.push(E.invalid('reportingInstance', '', `can have at most ${LIMIT} characters`));
  for (const f of ['action', 'reason']) {
    const v = ev[f] || '';
    if (!v) errs.push(E.required(f));
    if (v.length > LIMIT) errs.push(E.invalid(f, '', `can have at most ${LIMIT} characters`));
  }
  if (Buffer.byteLength(ev.note || '') > NOTE_LIMIT) errs.push(E.invalid('message', '', `can have at most ${NOTE_LIMIT} characters`));
  validateSeries(ev, errs);
  if (!isTime(ev.eventTime)) errs.push(E.required('eventTime'));
  if (ev.type !== 'Normal' && ev.type !== 'Warning') errs.push(E.invalid('type', '', `has invalid value: ${ev.type || ''}`));
  if (ev.deprecatedFirstTimestamp) errs.push(E.invalid('firstTimestamp', '', 'needs to be unset'));
  if (ev.deprecatedLastTimestamp) errs.push(E.invalid('lastTimestamp', '', 'needs to be unset'));
  if (ev.deprecatedCount) errs.push(E.invalid('count', '', 'needs to be unset'));
  if (ev.deprecatedSource && (ev.deprecatedSource.component || ev.deprecatedSource.host)) errs.push(E.invalid('source', '', 'needs to be unset'));
  return errs;
}

function validateUpdate(ev, old) {
  const errs = [];
  if (JSON.stringify(ev.series) !== JSON.stringify(old.series)) validateSeries(ev, errs);
  for (const f of IMMUTABLE) {
    if (JSON.stringify(ev[f]) !== JSON.stringify(old[f])) errs.push(E.invalid(f, ev[f] === undefined ? null : ev[f], 'field is immutable'));
  }
  return errs;
}

// routeEvents serves /apis/events.k8s.io[/v1[/...]]. h: the server's
// send, sendStatus, HttpError, parseJSONBody, mergePatch, jsonPatch.
function routeEvents(ctx, rest, h) {
  const { emu, req } = ctx;
  const m = req.method;
  if (!emu.store.events) emu.store.events = new Map();
  const events = emu.store.events;
  if (rest.length === 0) {
    return h.send(ctx, 200, { kind: 'APIGroup', apiVersion: 'v1', name: GROUP, versions: [{ groupVersion: `${GROUP}/v1`, version: 'v1' }], preferredVersion: { groupVersion: `${GROUP}/v1`, version: 'v1' } });
  }
  if (rest[0] !== 'v1') return h.sendStatus(ctx, E.status(404, 'NotFound', 'the server could not find the requested resource', {}));
  rest = rest.slice(1);
  const list = (ns) => h.send(ctx, 200, {
    kind: 'EventList', apiVersion: `${GROUP}/v1`, metadata: { resourceVersion: String(emu.store.rv) },
    items: [...events.values()].filter((e) => ns === null || e.metadata.namespace === ns),
  });
  if (rest.length === 1 && rest[0] === 'events') return m === 'GET' ? list(null) : h.sendStatus(ctx, E.methodNotAllowed());
  if (rest[0] !== 'namespaces' || rest[2] !== 'events' || rest.length > 4) {
    return h.sendStatus(ctx, E.status(404, 'NotFound', 'the server could not find the requested resource', {}));
  }
  const ns = rest[1];
  if (rest.length === 3) {
    if (m === 'GET') return list(ns);
    if (m !== 'POST') return h.sendStatus(ctx, E.methodNotAllowed());
    const ev = h.parseJSONBody(ctx, 'Event') || {};
    ev.metadata = ev.metadata || {};
    if (ev.metadata.namespace && ev.metadata.namespace !== ns) {
      throw new h.HttpError(E.badRequest('the namespace of the provided object does not match the namespace sent on the request'));
    }
    ev.metadata.namespace = ns;
    if (!ev.metadata.name && ev.metadata.generateName) ev.metadata.name = ev.metadata.generateName + crypto.randomBytes(3).toString('hex').slice(0, 5);
    const errs = validateCreate(ev, ns);
    if (errs.length) throw new h.HttpError(E.invalidStatus('Event', ev.metadata.name || '', errs, GROUP));
    const key = `${ns}/${ev.metadata.name}`;
    if (events.has(key)) throw new h.HttpError(E.alreadyExists('events', ev.metadata.name, GROUP));
    Object.assign(ev.metadata, { uid: crypto.randomUUID(), resourceVersion: String(emu.store.nextRV()), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
    ev.apiVersion = `${GROUP}/v1`;
    ev.kind = 'Event';
    events.set(key, ev);
    return h.send(ctx, 201, ev);
  }
  const name = rest[3];
  const key = `${ns}/${name}`;
  const old = events.get(key);
  if (!old) throw new h.HttpError(E.notFound('events', name, GROUP));
  if (m === 'GET') return h.send(ctx, 200, old);
  if (m === 'DELETE') { events.delete(key); return h.send(ctx, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: GROUP, kind: 'events', uid: old.metadata.uid } }); }
  if (m !== 'PATCH') return h.sendStatus(ctx, E.methodNotAllowed());
  const ct = (req.headers['content-type'] || '').split(';')[0].trim();
  const types = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];
  if (!types.includes(ct)) {
    throw new h.HttpError(E.status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${types.join(', ')}`));
  }
  const patch = h.parseJSONBody(ctx, 'error decoding patch');
  let next;
  try { next = ct === 'application/json-patch+json' ? h.jsonPatch(old, patch) : h.mergePatch(old, patch); } catch (e) {
    throw new h.HttpError(E.status(422, 'Invalid', e.message));
  }
  const errs = validateUpdate(next, old);
  if (next.metadata.name !== name) errs.push(E.invalid('metadata.name', next.metadata.name, 'field is immutable'));
  if (errs.length) throw new h.HttpError(E.invalidStatus('Event', name, errs, GROUP));
  next.metadata = { ...clone(old.metadata), resourceVersion: String(emu.store.nextRV()) };
  events.set(key, next);
  return h.send(ctx, 200, next);
}

module.exports = { routeEvents, validateCreate, validateUpdate };
