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

function title(comment, code) {
  const m = /^([a-z_][a-z0-9_]*(?: \/ [a-z_][a-z0-9_]*)*) - /.exec(comment || '');
  if (m) return m[1];
  const d = /(?:struct|enum) (kp_[a-z_]+) \{/.exec(code) || /\(\*(kp_[a-z_]+)\)/.exec(code) ||
    /#define (KP_[A-Z_]+)/.exec(code) || /(kp_[a-z_]+)\(/.exec(code);
  return d ? d[1] : null;
}

const lines = ['# kubeletplugin API reference', '',
  'Generated from `include/kubeletplugin.h` by `node docs/gen-api.js > docs/api.md`;',
  'the header is the authority. For how the pieces fit together see',
  '[driver-guide.md](driver-guide.md); for the sandbox, [security.md](security.md).', ''];
for (const e of entries(src)) {
  const text = e.comment === null ? '' : clean(e.comment);
  const code = e.code.join('\n').trim();
  const banner = /^-{8,}\n?([\s\S]*)$/.exec(text);
  if (banner) {
    const body = banner[1].trim().replace(/\n/g, ' ');
    const m = /^(.*?)[.:](\s|$)(.*)$/.exec(body);
    lines.push(`## ${m ? m[1] : body}`, '');
    if (m && m[3]) lines.push(m[3], '');
    if (code) lines.push('```c', code, '```', '');
    continue;
  }
  if (!text && !code) continue;
  const t = title(text, code);
  if (t) lines.push(`### ${t}`, '');
  if (text) lines.push(text, '');
  if (code) lines.push('```c', code, '```', '');
}
process.stdout.write(`${lines.join('\n').replace(/\n{3,}/g, '\n\n').trim()}\n`);
