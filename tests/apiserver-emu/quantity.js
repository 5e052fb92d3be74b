'use strict';
// Kubernetes resource.Quantity, reimplemented after
// k8s.io/apimachinery/pkg/api/resource (quantity.go, amount.go, suffix.go).
//
// Why so literal: the API server answers with the *serialized* form of a
// quantity, and that form is either the exact input string (when the parser
// considered it canonical and cached it) or the canonical rendering. Clients
// that compare strings instead of values break on exactly these cases
// ("1024Mi" comes back as "1Gi", "1.5" as "1500m", but "1.500" stays).
//
// A value is kept as an exact decimal: unscaled BigInt `u` and exponent `e`,
// value = u * 10^e.

const SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";
const ERR_FORMAT = `quantities must match the regular expression '${SPLIT_RE}'`;
const ERR_NUMERIC = "unable to parse quantity's numeric part";
const ERR_SUFFIX = "unable to parse quantity's suffix";

const DEC_SUFFIX = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BIN_SUFFIX = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DEC_BY_EXP = Object.fromEntries(Object.entries(DEC_SUFFIX).map(([k, v]) => [v, k]));
const BIN_BY_EXP = Object.fromEntries(Object.entries(BIN_SUFFIX).map(([k, v]) => [v / 10, k]));

const INT64_MAX = (1n << 63n) - 1n;
const MAX_INT64_FACTORS = 18;

class QuantityError extends Error {}

function isDigit(c) { return c >= '0' && c <= '9'; }

// parseQuantityString mirrors the hand-written scanner of apimachinery,
// including its leniency ("1.G" is accepted, leading zeros are stripped).
function scan(str) {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (pos < end) {
    if (str[0] === '-') { positive = false; pos++; } else if (str[0] === '+') pos++;
  }
  for (;;) {
    if (pos >= end) return { positive, num: '0', denom: '', suffix: '' };
    if (str[pos] === '0') pos++; else break;
  }
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  let num = str.slice(pos, i);
  if (i >= end) return { positive, num: num || '0', denom: '', suffix: '' };
  pos = i;
  if (num.length === 0) num = '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, num, denom, suffix: '' };
    pos = i;
  }
  const suffixStart = pos;
  i = pos;
  while (i < end && 'eEinumkKMGTP'.includes(str[i])) i++;
  if (i >= end) return { positive, num, denom, suffix: str.slice(suffixStart) };
  pos = i;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  for (i = pos; i < end; i++) if (!isDigit(str[i])) throw new QuantityError(ERR_FORMAT);
  return { positive, num, denom, suffix: str.slice(suffixStart) };
}

function interpretSuffix(s) {
  if (Object.prototype.hasOwnProperty.call(DEC_SUFFIX, s)) return { base: 10, exp: DEC_SUFFIX[s], format: 'DecimalSI' };
  if (Object.prototype.hasOwnProperty.call(BIN_SUFFIX, s)) return { base: 2, exp: BIN_SUFFIX[s], format: 'BinarySI' };
  if (s.length > 1 && (s[0] === 'e' || s[0] === 'E')) {
    if (!/^[+-]?[0-9]+$/.test(s.slice(1))) return null;
    const n = Number(s.slice(1));
    if (!Number.isSafeInteger(n)) return null;
    return { base: 10, exp: n, format: 'DecimalExponent' };
  }
  return null;
}

function pow10(n) { return 10n ** BigInt(n); }

// Round u*10^e up (away from zero) to exponent -9, like inf.RoundUp to Nano.
function roundToNano(u, e) {
  if (e >= -9 || u === 0n) return { u, e };
  const div = pow10(-9 - e);
  const neg = u < 0n;
  let a = neg ? -u : u;
  let q = a / div;
  if (q * div !== a) q += 1n;
  return { u: neg ? -q : q, e: -9 };
}

// parse returns { u, e, format, s } where s is the cached original string
// when the Go parser would have kept it (see "if the number is in canonical
// form, reuse the string" in ParseQuantity), else undefined.
function parse(str) {
  if (typeof str !== 'string') throw new QuantityError(ERR_FORMAT);
  if (str.length === 0) throw new QuantityError(ERR_FORMAT);
  if (str === '0') return { u: 0n, e: 0, format: 'DecimalSI', s: '0' };
  const { positive, num, denom, suffix } = scan(str);
  const suf = interpretSuffix(suffix);
  if (!suf) throw new QuantityError(ERR_SUFFIX);
  const { base, exp, format } = suf;

  let precision;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (exp >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exp);
      precision = 15 - num.length - Math.trunc(exp * 3 / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exp;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  }

  // Fast path of the Go parser: fits in int64 with scale >= nano.
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= -9) {
      const shifted = num + denom;
      const value = BigInt(shifted);
      if (value > INT64_MAX) throw new QuantityError(ERR_NUMERIC);
      let result = value * mantissa;
      if (result <= INT64_MAX) {
        if (!positive) result = -result;
        let cached;
        if (format === 'BinarySI') {
          if (exp % 10 === 0 && (value & 7n) !== 0n) cached = str;
        } else if (scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0') {
          cached = str;
        }
        return { u: result, e: scale, format, s: cached };
      }
    }
  }

  // Slow path (inf.Dec): exact value, rounded up to nano, binary capped.
  let u = BigInt(num + denom);
  let e = -denom.length;
  if (base === 10) e += exp;
  else u *= 1n << BigInt(exp);
  let fmt = format;
  ({ u, e } = roundToNano(u, e));
  if (fmt === 'BinarySI' && cmp({ u, e }, { u: INT64_MAX, e: 0 }) > 0) { u = INT64_MAX; e = 0; }
  if (fmt === 'BinarySI' && cmp({ u, e }, { u: 1n, e: 0 }) < 0 && u !== 0n) fmt = 'DecimalSI';
  if (!positive) u = -u;
  return { u, e, format: fmt, s: undefined };
}

function align(a, b) {
  const e = Math.min(a.e, b.e);
  return [a.u * pow10(a.e - e), b.u * pow10(b.e - e)];
}

function cmp(a, b) {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function removeFactors(v, base) {
  let neg = v < 0n;
  let r = neg ? -v : v;
  let times = 0;
  while (r >= base && r % base === 0n) { r /= base; times++; }
  return { r: neg ? -r : r, times };
}

// canonical renders like Quantity.CanonicalizeBytes: no fractional digits,
// the largest suffix that loses no precision, BinarySI only for exact
// integers with magnitude >= 1024.
function canonical(q) {
  if (q.u === 0n) return '0';
  let format = q.format;
  let { u, e } = q;
  if (format === 'BinarySI') {
    const small = cmp(q, { u: -1024n, e: 0 }) > 0 && cmp(q, { u: 1024n, e: 0 }) < 0;
    let exact = true;
    if (e < 0) exact = u % pow10(-e) === 0n;
    if (small || !exact) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    const int = e >= 0 ? u * pow10(e) : u / pow10(-e);
    const { r, times } = removeFactors(int, 1024n);
    const suffix = BIN_BY_EXP[times];
    if (suffix !== undefined) return r.toString() + suffix;
    return (r * (1024n ** BigInt(times - 6))).toString() + 'Ei';
  }
  let { r, times } = removeFactors(u, 10n);
  let exp = e + times;
  const mod = ((exp % 3) + 3) % 3;
  if (mod === 1) { r *= 10n; exp -= 1; } else if (mod === 2) { r *= 100n; exp -= 2; }
  if (format === 'DecimalExponent') return r.toString() + (exp === 0 ? '' : 'e' + exp);
  const suffix = DEC_BY_EXP[exp];
  return r.toString() + (suffix !== undefined ? suffix : 'e' + exp);
}

// toString is what the server emits: the cached input or the canonical form.
function toString(q) { return q.s !== undefined ? q.s : canonical(q); }

// normalize parses and re-serializes, as a decode/encode round trip through
// the API server does. JSON numbers are accepted too (Quantity.UnmarshalJSON
// strips quotes only when present).
function normalize(v) {
  let str = v;
  if (typeof v === 'number') str = String(v);
  if (typeof str !== 'string') throw new QuantityError(ERR_FORMAT);
  return toString(parse(str.trim()));
}

function equal(a, b) { return cmp(parse(String(a)), parse(String(b))) === 0; }

module.exports = { parse, canonical, toString, normalize, equal, cmp, QuantityError, ERR_FORMAT };
