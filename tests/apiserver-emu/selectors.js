'use strict';
// Field and label selectors as the API server parses them
// (apimachinery/pkg/fields and pkg/labels), restricted to what we need.

class SelectorError extends Error {}

// splitTerms splits on commas not escaped by a backslash.
function splitTerms(s) {
  const out = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) { cur += s[i] + s[i + 1]; i++; continue; }
    if (s[i] === ',') { out.push(cur); cur = ''; continue; }
    cur += s[i];
  }
  out.push(cur);
  return out;
}

function unescape(v, orig) {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    if (v[i] === '\\') {
      const n = v[i + 1];
      if (n === '\\' || n === ',' || n === '=') { out += n; i++; continue; }
      throw new SelectorError(`invalid field selector: invalid escape sequence: ${orig}`);
    }
    out += v[i];
  }
  return out;
}

// parseFieldSelector returns [{key, op: '='|'!=', value}] or throws.
function parseFieldSelector(s) {
  if (!s) return [];
  const terms = [];
  for (const t of splitTerms(s)) {
    if (t === '') continue;
    let m = null;
    for (let i = 0; i < t.length; i++) {
      if (t[i] === '\\') { i++; continue; }
      if (t.startsWith('!=', i)) { m = { i, op: '!=', len: 2 }; break; }
      if (t.startsWith('==', i)) { m = { i, op: '=', len: 2 }; break; }
      if (t[i] === '=') { m = { i, op: '=', len: 1 }; break; }
    }
    if (!m) throw new SelectorError(`invalid selector: '${s}'; can't understand '${t}'`);
    terms.push({ key: t.slice(0, m.i), op: m.op, value: unescape(t.slice(m.i + m.len), s) });
  }
  return terms;
}

function matchFields(terms, fields) {
  return terms.every((t) => (t.op === '=' ? fields[t.key] === t.value : fields[t.key] !== t.value));
}

// parseLabelSelector supports =, ==, !=, in, notin, exists and !exists.
function parseLabelSelector(s) {
  if (!s || !s.trim()) return [];
  const parts = [];
  let depth = 0;
  let cur = '';
  for (const c of s) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) { parts.push(cur); cur = ''; continue; }
    cur += c;
  }
  parts.push(cur);
  const keyRe = '([A-Za-z0-9][-A-Za-z0-9_./]*)?[A-Za-z0-9]';
  return parts.map((raw) => {
    const p = raw.trim();
    let m;
    if ((m = p.match(new RegExp(`^!\\s*(${keyRe})$`)))) return { key: m[1], op: '!exists' };
    if ((m = p.match(new RegExp(`^(${keyRe})\\s*(in|notin)\\s*\\(([^)]*)\\)$`)))) {
      return { key: m[1], op: m[3], values: m[4].split(',').map((x) => x.trim()) };
    }
    if ((m = p.match(new RegExp(`^(${keyRe})\\s*(==|=|!=)\\s*([-A-Za-z0-9_.]*)$`)))) {
      return { key: m[1], op: m[3] === '!=' ? '!=' : '=', values: [m[4]] };
    }
    if ((m = p.match(new RegExp(`^(${keyRe})$`)))) return { key: m[1], op: 'exists' };
    throw new SelectorError(`unable to parse requirement: found '${p}', expected: identifier`);
  });
}

function matchLabels(reqs, labels = {}) {
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    switch (r.op) {
      case 'exists': return has;
      case '!exists': return !has;
      case '=': case 'in': return has && r.values.includes(labels[r.key]);
      case '!=': case 'notin': return !has || !r.values.includes(labels[r.key]);
      default: return false;
    }
  });
}

module.exports = { SelectorError, parseFieldSelector, matchFields, parseLabelSelector, matchLabels };
