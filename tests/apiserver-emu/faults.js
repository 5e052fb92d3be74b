'use strict';
// Fault injection rules and the request log.
//
// A rule matches requests by method, path (string with * globs, or RegExp)
// and optional query subset; it fires `times` times (after letting `skip`
// matching requests through) and then retires. Actions:
//   status  answer with a Status (code/reason/message, optional Retry-After)
//   reset   destroy the TCP connection without an HTTP answer
//   delay   wait delayMs, then serve the request normally
//   hang    never answer (the client must time out)
//   truncate  serve normally but send only the first half of the body
//           (Content-Length announces all of it), then drop the connection
//   garble  serve normally with the body's second half replaced by junk
//           (not JSON)
//   huge    answer 200 with `bytes` bytes of JSON (default 65 MiB, over
//           every body limit of the publisher)
//   amplify answer 200 with `bytes` bytes (default 3.5 MiB) of JSON that
//           is nearly all empty arrays ("[],[],..."): small on the wire,
//           ~50x in a parsed tree
// Not a rule but a switch (index.js tlsFault): the TLS handshake of new
// connections fails.

const E = require('./errors.js');

const DEFAULT_REASON = {
  400: ['BadRequest', 'injected bad request'],
  401: ['Unauthorized', 'Unauthorized'],
  403: ['Forbidden', 'injected forbidden'],
  404: ['NotFound', 'the server could not find the requested resource'],
  409: ['Conflict', 'Operation cannot be fulfilled: injected conflict'],
  410: ['Expired', 'injected expired'],
  429: ['TooManyRequests', 'Too many requests, please try again later.'],
  500: ['InternalError', 'Internal error occurred: injected'],
  503: ['ServiceUnavailable', 'injected: service unavailable'],
  504: ['Timeout', 'injected: the server was unable to return a response in the time allotted'],
};

function globToRe(s) {
  return new RegExp('^' + s.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
}

class Faults {
  constructor() { this.rules = []; this.nextId = 1; }

  add(rule) {
    const r = { id: this.nextId++, times: 1, skip: 0, hits: 0, seen: 0, ...rule };
    if (!r.action) r.action = r.status ? 'status' : 'reset';
    if (typeof r.path === 'string') r.pathRe = globToRe(r.path);
    else if (r.path instanceof RegExp) r.pathRe = r.path;
    else if (r.path && r.path.source) r.pathRe = new RegExp(r.path.source, r.path.flags || ''); // from JSON
    if (r.times === null || r.times === 'Infinity') r.times = Infinity;
    this.rules.push(r);
    return r.id;
  }

  clear(id) {
    if (id === undefined) this.rules = [];
    else this.rules = this.rules.filter((r) => r.id !== id);
  }

  // match returns the rule to apply to this request, consuming one use.
  // skipStatus leaves status rules alone (for requests that fail
  // authentication: upstream, APF never sees them).
  match(method, pathname, query, { skipStatus = false } = {}) {
    for (const r of this.rules) {
      if (skipStatus && r.action === 'status') continue;
      if (r.method && r.method !== '*' && r.method.toUpperCase() !== method) continue;
      if (r.pathRe && !r.pathRe.test(pathname)) continue;
      if (r.query && !Object.entries(r.query).every(([k, v]) => query[k] === String(v))) continue;
      r.seen++;
      if (r.seen <= r.skip) continue;
      r.hits++;
      if (r.hits >= r.times) this.rules = this.rules.filter((x) => x !== r);
      return r;
    }
    return null;
  }
}

// statusFor builds the response of a `status` rule.
function statusFor(r) {
  const [reason, message] = DEFAULT_REASON[r.status] || ['', `injected status ${r.status}`];
  const body = r.body !== undefined ? r.body : E.status(r.status, r.reason !== undefined ? r.reason : reason,
    r.message || message, r.retryAfter ? { retryAfterSeconds: Number(r.retryAfter) } : undefined);
  const headers = { ...(r.headers || {}) };
  if (r.retryAfter !== undefined) headers['Retry-After'] = String(r.retryAfter);
  return { code: r.status, body, headers };
}

// checkRate replays the log through a token bucket (client-go's flowcontrol:
// `burst` tokens, refilled at `qps`) and reports requests that came too early.
// `slack` tolerates timer jitter, in tokens.
function checkRate(entries, { qps = 5, burst = 10, slack = 0.5 } = {}) {
  let tokens = burst;
  let last = entries.length ? entries[0].time : 0;
  const violations = [];
  for (const e of entries) {
    tokens = Math.min(burst, tokens + ((e.time - last) / 1000) * qps);
    last = e.time;
    if (tokens < 1 - slack) {
      violations.push({ id: e.id, time: e.time, method: e.method, path: e.path, tokens });
      tokens = 0; // judge the next request from an empty bucket, not a debt
    } else tokens = Math.max(0, tokens - 1);
  }
  return { ok: violations.length === 0, violations };
}

module.exports = { Faults, statusFor, checkRate, globToRe };
