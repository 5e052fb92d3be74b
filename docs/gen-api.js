#!/usr/bin/env node
'use strict';
// gen-api.js - docs/api.md from the comments in include/kubeletplugin.h:
//   node docs/gen-api.js > docs/api.md
// Each "/* ---- Title" banner becomes a section; each comment with the
// declarations right after it becomes an entry (the comment as text, the
// declarations as C). The header stays the reference; this is a view.

const fs = require('node:fs');
const path = require('node:path');

const HEADER = path.join(__dirname, '..', 'include', 'kubeletplugin.h');
const src = fs.readFileSync(HEADER, 'utf8');

// Entries: a comment that starts a line at column 0, and the code after
// it up to a blank line outside braces. Comments inside code (struct
// members, trailing notes) stay in the code.
function entries(text) {
  const out = [];
  const lines = text.split('\n');
  let cur = null;
  let depth = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (depth === 0 && /^\/\*/.test(l)) {
      const body = [];
      let j = i;
      for (; j < lines.length; j++) {
        body.push(lines[j]);
        if (lines[j].includes('*/')) break;
      }
      i = j;
      cur = { comment: body.join('\n').replace(/^\/\*/, '').replace(/\*\/\s*$/, ''), code: [] };
      out.push(cur);
      continue;
    }
    if (!cur) continue;
    if (depth === 0 && l.trim() === '') {
      if (cur.code.length) cur = { comment: null, code: [] };
      continue;
    }
    if (/^#(ifndef|endif|ifdef|if |else)|^#define KUBELETPLUGIN_H|^extern "C"|^\}$|KP_EXTERN$|#define KP_(EXTERN|PRINTF)/.test(l) && depth === 0) continue;
    depth += (l.match(/\{/g) || []).length - (l.match(/\}/g) || []).length;
    if (cur.comment === null && !out.includes(cur)) out.push(cur);
    cur.code.push(l.replace(/KP_EXTERN /g, ''));
  }
  return out;
}

const clean = (comment) => comment.split('\n')
  .map((l) => l.replace(/^\s*\* ?/, '').replace(/^\s+$/, ''))
  .join('\n').trim();

// Comment text as Markdown: tab-indented lines are C (fenced), and each
// "- " list is set apart by blank lines with its items' continuation
// lines indented under them, so neither runs into a paragraph.
function markdown(text) {
  const out = [];
  let list = false;
  let code = false;
  const gap = () => { if (out.length && out[out.length - 1] !== '') out.push(''); };
  for (const l of text.split('\n')) {
    if (l.startsWith('\t')) {
      if (!code) { gap(); out.push('```c'); code = true; list = false; }
      out.push(l.slice(1));
      continue;
    }
    if (code) { out.push('```', ''); code = false; }
    if (/^ {0,3}- /.test(l)) {
      if (!list) gap();
      list = true;
      out.push(l.trimStart());
      continue;
    }
    if (list && l !== '' && /^ /.test(l)) {
      out.push(`  ${l.trim()}`);
      continue;
    }
    if (list) { gap(); list = false; }
    out.push(l);
  }
  if (code) out.push('```');
  return out.join('\n');
}

// A banner's title is its first sentence: up to the first '.' or ':'
// outside parentheses that ends a word ("journal (beyond upstream: ...)."
// keeps its parenthesis); the rest is its text.
function bannerTitle(body) {
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if ((c === '.' || c === ':') && depth === 0 && (i + 1 === body.length || /\s/.test(body[i + 1]))) {
      return { title: body.slice(0, i), rest: body.slice(i + 1).replace(/^[ \t]+/, '') };
    }
  }
  return { title: body, rest: '' };
}

function title(comment, code) {
  const m = /^([a-z_][a-z0-9_]*(?: \/ [a-z_][a-z0-9_]*)*) - /.exec(comment || '');
  if (m) return m[1];
  // A type is named as such: the function of the same name has its own.
  const d = /(struct|enum) (kp_[a-z_]+) \{/.exec(code);
  if (d) return `${d[1]} ${d[2]}`;
  const f = /\(\*(kp_[a-z_]+)\)/.exec(code) || /#define (KP_[A-Z_]+)/.exec(code) ||
    /(kp_[a-z_]+)\(/.exec(code);
  return f ? f[1] : null;
}

const lines = ['# kubeletplugin API reference', '',
  'Generated from `include/kubeletplugin.h` by `node docs/gen-api.js > docs/api.md`;',
  'the header is the authority. For how the pieces fit together see',
  '[driver-guide.md](driver-guide.md); for the sandbox, [security.md](security.md).', ''];
const headings = new Set();
function heading(h) {
  // Headings are link targets: each must be whole and appear once.
  if (headings.has(h)) throw new Error(`gen-api.js: duplicate heading "${h}"`);
  headings.add(h);
  lines.push(h, '');
}
for (const e of entries(src)) {
  const text = e.comment === null ? '' : clean(e.comment);
  const code = e.code.join('\n').trim();
  const banner = /^-{8,}\n?([\s\S]*)$/.exec(text);
  if (banner) {
    const b = bannerTitle(banner[1].trim());
    heading(`## ${b.title.replace(/\s*\n\s*/g, ' ')}`);
    if (b.rest) lines.push(markdown(b.rest), '');
    if (code) lines.push('```c', code, '```', '');
    continue;
  }
  if (!text && !code) continue;
  const t = title(text, code);
  if (t) heading(`### ${t}`);
  if (text) lines.push(markdown(text), '');
  if (code) lines.push('```c', code, '```', '');
}
process.stdout.write(`${lines.join('\n').replace(/\n{3,}/g, '\n\n').trim()}\n`);
