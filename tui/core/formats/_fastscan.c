/* Optional native scanner for tui/core/formats/fastscan.py: one interpreter of the line shapes the
 * families declare (their family.toml), with no family in it. The pure-Python scanner (regular
 * expressions compiled from the same shapes) is the reference; the tests check that both give what
 * the line parser gives, on generated and real lines, for every family (a family defined only in
 * tests included).
 *
 * configure(anchors, forbidden, ncols, ts_col, elapsed_col, shapes) takes grammar.ANCHORS (bytes,
 * at least 3 long each: every literal text the line parser acts on), the texts a process tag may
 * not hold, the number of output columns (fastscan.LAYOUT), the columns of the clocks, and each
 * shape as (anchor index, family index, pairs, pass columns, derived (dst, src) pairs, (refuse
 * column, within, per item), ops): the program of shape_program.py, ops (code, a, b, text) with
 * the group ops (optional, repeat, capture) followed by their a own ops, a number's op with the
 * text before it.
 *
 * scan(buf, year) reads a buffer of whole lines. Anchors are found with a Wu-Manber skip loop
 * (_fastscan_search.h: one pass finds them all, most bytes never looked at one by one), behind a
 * SIMD filter on x86-64 (_fastscan_simd.h; the loop alone elsewhere); every line holding an anchor
 * must be a line of one of that anchor's shapes, all of one family, else the result is None (an
 * anchor without a shape, two anchors on a line: the line parser's) or False (a shaped anchor on
 * a line this scanner does not read: the Python scanner may, e.g. a number of 16 digits).
 * scan(buf, year, True) gives instead the offset of the line the scan stopped at, -1 when it
 * reads the whole buffer. The result is
 *   (n_lines, family, shape, n, line_nos, cols, ranks, rank_idx, pp, pp_k, edge)
 * family -1 none; line_nos int64 (1-based within buf); cols ncols columns of n doubles, NaN where
 * not printed; ranks the distinct rank captures and rank_idx (uint8) each record's; pp the list
 * values, pp_k (uint8) how many each record has; edge None or (process, head_unpaired, tail,
 * have_stamp, first_stamp, last_md) for the family's plug-in to settle (fastscan.Edge).
 * Numbers are converted without strtod: locale-independent, and correctly rounded (an exact
 * integer of at most 15 digits divided by an exact power of ten), i.e. equal to float().
 */
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXA 32  /* anchors (the search's candidate masks are 32 bits) */
#define MAXC 32  /* output columns */
#define MAXS 32  /* shapes */
#define MAXF 16  /* families */
#define MAXUNDO 64

static char *anch[MAXA];
static Py_ssize_t anch_len[MAXA];
static int n_anch = 0;

#include "_fastscan_search.h"
#include "_fastscan_simd.h"
#include "_fastscan_text.h"

enum { OP_LIT, OP_CHOICE, OP_SPACES, OP_NUM, OP_LIST, OP_CHARS, OP_CLOCK, OP_OPT, OP_REPEAT, OP_CAPTURE };
enum { CLOCK_DATE, CLOCK_YEARLESS, CLOCK_ELAPSED };
enum { CAP_RANK, CAP_PROCESS };

typedef struct {
    int code, a, b;
    char *text;
    Py_ssize_t len;
} op_t;

typedef struct {
    int anchor, family, pairs, recheck, has_rank, has_process, nops;
    int npass, pass[MAXC];
    int nderive, dst[4], src[4];
    int refuse_col;
    double within, per_item;
    op_t *ops;
} shape_t;

static shape_t shapes[MAXS];
static int anchor_shaped[MAXA]; /* 1 when some shape has that anchor */
static int of_anchor[MAXA][MAXS], n_of_anchor[MAXA]; /* the shapes of each anchor, in order */
static int n_shapes = 0, ncols = 0, ts_col = -1, el_col = -1;
static int family_edged[MAXF];
static char *forbid[MAXA];
static Py_ssize_t forbid_len[MAXA];
static int n_forbid = 0;
static unsigned char cls_tab[6][256];

static void fill_classes(void) {
    for (int c = 0; c < 256; c++) {
        int d = c >= '0' && c <= '9', u = c >= 'A' && c <= 'Z', l = c >= 'a' && c <= 'z';
        int w = d || u || l || c == '_';
        cls_tab[0][c] = (unsigned char)d;
        cls_tab[1][c] = (unsigned char)u;
        cls_tab[2][c] = (unsigned char)(u || c == '_');
        cls_tab[3][c] = (unsigned char)w;
        cls_tab[4][c] = (unsigned char)(w || c == ' ');
        cls_tab[5][c] = (unsigned char)(w || c == '.');
    }
}

/* -- matching a line ------------------------------------------------------------------------ */
typedef struct {
    double v[MAXC];
    int undo_col[MAXUNDO];
    double undo_old[MAXUNDO];
    int n_undo, depth; /* undo is kept only inside a group (depth > 0) */
    buf_t *pp;
    int k;
    double sum;
    const char *cap_s[2], *cap_e[2];
    int clock_kind, st[5], year;
} mctx_t;

typedef struct {
    int n_undo, k;
    Py_ssize_t pp_n;
    double sum;
    const char *cap_s[2], *cap_e[2];
} mark_t;

static void mark(const mctx_t *C, mark_t *M) {
    M->n_undo = C->n_undo, M->k = C->k, M->pp_n = C->pp->n, M->sum = C->sum;
    memcpy(M->cap_s, C->cap_s, sizeof M->cap_s);
    memcpy(M->cap_e, C->cap_e, sizeof M->cap_e);
}

static void back(mctx_t *C, const mark_t *M) {
    while (C->n_undo > M->n_undo) {
        C->n_undo--;
        C->v[C->undo_col[C->n_undo]] = C->undo_old[C->n_undo];
    }
    C->k = M->k, C->pp->n = M->pp_n, C->sum = M->sum;
    memcpy(C->cap_s, M->cap_s, sizeof C->cap_s);
    memcpy(C->cap_e, M->cap_e, sizeof C->cap_e);
}

static inline int set_col(mctx_t *C, int col, double x) {
    if (col < 0) return 1;
    if (!C->depth) {
        C->v[col] = x;
        return 1;
    }
    if (C->n_undo == MAXUNDO) return 0;
    C->undo_col[C->n_undo] = col;
    C->undo_old[C->n_undo++] = C->v[col];
    C->v[col] = x;
    return 1;
}

/* digits: exactly n (n > 0), or 1 to 9 (n == 0) */
static int digits(const char **p, const char *e, int n, long long *out) {
    const char *q = *p;
    long long m = 0;
    int got = 0;
    while (q < e && is_digit(*q) && (n ? got < n : got < 9)) m = m * 10 + (*q++ - '0'), got++;
    if (got == 0 || (n && got != n)) return 0;
    *out = m;
    *p = q;
    return 1;
}

static const char *read_clock(const op_t *op, const char *p, const char *e, mctx_t *C) {
    long long f[8] = {0, 0, 0, 0, 0, 0, 0, 0}; /* Y m d H M S, then N, L, U below */
    long long N = 0, L = 0, U = 0;
    double frac = 0.0;
    for (Py_ssize_t i = 0; i < op->len; i++) {
        char c = op->text[i];
        if (c != '%') {
            if (p >= e || *p != c) return NULL;
            p++;
            continue;
        }
        char d = op->text[++i];
        int ok = 1;
        switch (d) {
        case 'Y': ok = digits(&p, e, 4, &f[0]); break;
        case 'm': ok = digits(&p, e, 2, &f[1]); break;
        case 'd': ok = digits(&p, e, 2, &f[2]); break;
        case 'H': ok = digits(&p, e, 2, &f[3]); break;
        case 'M': ok = digits(&p, e, 2, &f[4]); break;
        case 'S': ok = digits(&p, e, 2, &f[5]); break;
        case 'N': ok = digits(&p, e, 0, &N); break;
        case 'L': ok = digits(&p, e, 3, &L); break;
        case 'U': ok = digits(&p, e, 3, &U); break;
        case 'f':
            if (p < e && *p == '.') {
                const char *q = p + 1, *s0 = q;
                unsigned long long m = 0;
                while (q < e && is_digit(*q) && q - s0 < 7) m = m * 10 + (unsigned long long)(*q++ - '0');
                if (q == s0 || q - s0 > 6) return NULL;
                frac = (double)m / POW10[q - s0];
                p = q;
            }
            break;
        default: return NULL;
        }
        if (!ok) return NULL;
    }
    int kind = op->a;
    if (kind == CLOCK_ELAPSED) {
        if (el_col >= 0 && !set_col(C, el_col, (double)(N * 60 + f[5]) + (double)L / 1e3 + (double)U / 1e6))
            return NULL;
    } else {
        if (f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 60) return NULL;
        long long y = kind == CLOCK_DATE ? f[0] : C->year;
        double ts = (double)(days_from_civil(y, f[1], f[2]) * 86400 + f[3] * 3600 + f[4] * 60 + f[5]) + frac;
        if (ts_col >= 0 && !set_col(C, ts_col, ts)) return NULL;
        for (int i = 0; i < 5; i++) C->st[i] = (int)f[i + 1];
    }
    C->clock_kind = kind;
    return p;
}

/* the k bytes at p are t's: 8 at a time (unaligned loads through memcpy), then one by one */
static inline int same_bytes(const char *p, const char *t, Py_ssize_t k) {
    while (k >= 8) {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, t, 8);
        if (a != b) return 0;
        p += 8, t += 8, k -= 8;
    }
    while (k > 0) {
        if (*p++ != *t++) return 0;
        k--;
    }
    return 1;
}

static const char *run(const op_t *ops, int n, const char *p, const char *e, mctx_t *C) {
    for (int i = 0; i < n; i++) {
        const op_t *op = &ops[i];
        switch (op->code) {
        case OP_LIT: {
            Py_ssize_t k = op->len;
            if (e - p < k) return NULL;
            if (!same_bytes(p, op->text, k)) return NULL;
            p += k;
            break;
        }
        case OP_CHOICE: {
            const char *t = op->text, *te = op->text + op->len;
            int found = 0;
            while (t <= te && !found) {
                size_t k = strlen(t); /* the texts are joined by NUL bytes */
                if ((size_t)(e - p) >= k && memcmp(p, t, k) == 0) {
                    p += k;
                    found = 1;
                }
                t += k + 1;
            }
            if (!found) return NULL;
            break;
        }
        case OP_SPACES:
            while (p < e && *p == ' ') p++;
            break;
        case OP_NUM: {
            double x;
            if (op->len && (e - p < op->len || !same_bytes(p, op->text, op->len))) return NULL;
            p += op->len;
            if (!number(&p, e, op->a != 0, op->a == 2 ? 2 : 0, &x)) return NULL;
            if (op->a == 2 && !lit(&p, e, "%")) return NULL;
            if (!set_col(C, op->b, x)) return NULL;
            break;
        }
        case OP_LIST:
            if (op->len && (e - p < op->len || !same_bytes(p, op->text, op->len))) return NULL;
            p += op->len;
            for (;;) {
                double x;
                if (!decimal(&p, e, &x) || C->k == 255 || push(C->pp, &x, sizeof x)) return NULL;
                C->k++;
                C->sum += x;
                const char *q = p;
                if (lit(&q, e, ", ") && q < e && is_digit(*q)) {
                    p = q;
                    continue;
                }
                break;
            }
            break;
        case OP_CHARS: {
            const unsigned char *tab = cls_tab[op->a & 0xff];
            int lazy = (op->a >> 8) & 1, lo = op->a >> 16, hi = op->b, got = 0;
            const op_t *stop = lazy && i + 1 < n && ops[i + 1].code == OP_LIT ? &ops[i + 1] : NULL;
            for (;;) {
                if (stop && got >= lo && e - p >= stop->len && memcmp(p, stop->text, (size_t)stop->len) == 0) break;
                if (p >= e || !tab[(unsigned char)*p] || (hi && got >= hi)) break;
                p++, got++;
            }
            if (got < lo || (stop && !(e - p >= stop->len && memcmp(p, stop->text, (size_t)stop->len) == 0)))
                return NULL;
            break;
        }
        case OP_CLOCK:
            if (!(p = read_clock(op, p, e, C))) return NULL;
            break;
        case OP_OPT: {
            mark_t M;
            mark(C, &M);
            C->depth++;
            const char *q = run(ops + i + 1, op->a, p, e, C);
            C->depth--;
            if (q) p = q;
            else back(C, &M);
            i += op->a;
            break;
        }
        case OP_REPEAT:
            for (;;) {
                mark_t M;
                mark(C, &M);
                C->depth++;
                const char *q = run(ops + i + 1, op->a, p, e, C);
                C->depth--;
                if (!q || q == p) {
                    back(C, &M);
                    break;
                }
                p = q;
            }
            i += op->a;
            break;
        case OP_CAPTURE: {
            const char *s0 = p;
            if (!(p = run(ops + i + 1, op->a, p, e, C))) return NULL;
            C->cap_s[op->b] = s0, C->cap_e[op->b] = p;
            i += op->a;
            break;
        }
        default: return NULL;
        }
    }
    return p;
}

/* -- configure ------------------------------------------------------------------------------ */
static void free_config(void) {
    for (int i = 0; i < n_anch; i++) free(anch[i]);
    for (int i = 0; i < n_forbid; i++) free(forbid[i]);
    for (int s = 0; s < n_shapes; s++) {
        for (int i = 0; i < shapes[s].nops; i++) free(shapes[s].ops[i].text);
        free(shapes[s].ops);
    }
    n_anch = n_forbid = n_shapes = 0;
}

static int bytes_list(PyObject *seq, char **out, Py_ssize_t *lens, int *n, int max, Py_ssize_t minlen) {
    PyObject *fast = PySequence_Fast(seq, "a sequence of bytes");
    if (!fast) return 0;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(fast);
    if (m > max) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "too many texts");
        return 0;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        char *s;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(PySequence_Fast_GET_ITEM(fast, i), &s, &len) < 0 || len < minlen) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "texts are bytes of length >= 3");
            return 0;
        }
        out[i] = (char *)malloc((size_t)len + 1);
        memcpy(out[i], s, (size_t)len);
        out[i][len] = 0;
        lens[i] = len;
        (*n)++;
    }
    Py_DECREF(fast);
    return 1;
}

static int int_list(PyObject *seq, int *out, int max, int *n) {
    PyObject *fast = PySequence_Fast(seq, "a sequence of ints");
    if (!fast) return 0;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(fast);
    if (m > max) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "too many columns");
        return 0;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (x < 0 || x >= ncols) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a column out of range");
            return 0;
        }
        out[i] = (int)x;
    }
    *n = (int)m;
    Py_DECREF(fast);
    return 1;
}

static int one_shape(PyObject *t, shape_t *S) {
    PyObject *pass, *derive, *ops;
    int refuse;
    memset(S, 0, sizeof *S);
    if (!PyArg_ParseTuple(t, "iiiiOO(idd)O", &S->anchor, &S->family, &S->pairs, &S->recheck, &pass, &derive,
                          &refuse, &S->within, &S->per_item, &ops))
        return 0;
    if (S->anchor < 0 || S->anchor >= n_anch || S->family < 0 || S->family >= MAXF || refuse >= ncols) {
        PyErr_SetString(PyExc_ValueError, "a shape's anchor, family or column is out of range");
        return 0;
    }
    S->refuse_col = refuse;
    if (!int_list(pass, S->pass, MAXC, &S->npass)) return 0;
    PyObject *d = PySequence_Fast(derive, "derived columns");
    if (!d) return 0;
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(d);
    for (Py_ssize_t i = 0; i < nd && i < 4; i++) {
        int a, b;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(d, i), "ii", &a, &b) || a < 0 || b < 0 || a >= ncols ||
            b >= ncols) {
            Py_DECREF(d);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a derived column out of range");
            return 0;
        }
        S->dst[i] = a, S->src[i] = b, S->nderive++;
    }
    Py_DECREF(d);
    PyObject *o = PySequence_Fast(ops, "ops");
    if (!o) return 0;
    S->nops = (int)PySequence_Fast_GET_SIZE(o);
    S->ops = (op_t *)calloc((size_t)S->nops + 1, sizeof(op_t));
    for (int i = 0; i < S->nops; i++) {
        op_t *op = &S->ops[i];
        const char *s;
        Py_ssize_t len;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(o, i), "iiiy#", &op->code, &op->a, &op->b, &s, &len)) {
            Py_DECREF(o);
            return 0;
        }
        op->text = (char *)malloc((size_t)len + 1);
        memcpy(op->text, s, (size_t)len);
        op->text[len] = 0;
        op->len = len;
        int group = op->code == OP_OPT || op->code == OP_REPEAT || op->code == OP_CAPTURE;
        if (op->code < OP_LIT || op->code > OP_CAPTURE || (group && (op->a < 0 || i + op->a >= S->nops)) ||
            (op->code == OP_NUM && (op->a < 0 || op->a > 2 || op->b >= ncols)) ||
            (op->code == OP_CHARS && (op->a & 0xff) > 5) || (op->code == OP_CLOCK && (op->a < 0 || op->a > 2))) {
            Py_DECREF(o);
            PyErr_SetString(PyExc_ValueError, "a bad op");
            return 0;
        }
        if (op->code == OP_CAPTURE) {
            if (op->b == CAP_RANK) S->has_rank = 1;
            else if (op->b == CAP_PROCESS) S->has_process = 1;
            else {
                Py_DECREF(o);
                PyErr_SetString(PyExc_ValueError, "a bad capture");
                return 0;
            }
        }
        if (op->code == OP_CLOCK && op->a == CLOCK_YEARLESS) family_edged[S->family] = 1;
    }
    Py_DECREF(o);
    if (S->pairs) family_edged[S->family] = 1;
    return 1;
}

static PyObject *configure(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *anchors, *forbidden, *shape_seq;
    int nc, tc, ec;
    if (!PyArg_ParseTuple(args, "OOiiiO", &anchors, &forbidden, &nc, &tc, &ec, &shape_seq)) return NULL;
    free_config();
    memset(family_edged, 0, sizeof family_edged);
    if (nc < 1 || nc > MAXC || tc >= nc || ec >= nc) {
        PyErr_SetString(PyExc_ValueError, "between 1 and 32 columns");
        return NULL;
    }
    ncols = nc, ts_col = tc, el_col = ec;
    if (!bytes_list(anchors, anch, anch_len, &n_anch, MAXA, 3) ||
        !bytes_list(forbidden, forbid, forbid_len, &n_forbid, MAXA, 1)) {
        free_config();
        return NULL;
    }
    PyObject *fast = PySequence_Fast(shape_seq, "shapes must be a sequence");
    if (!fast) {
        free_config();
        return NULL;
    }
    Py_ssize_t ns = PySequence_Fast_GET_SIZE(fast);
    if (ns > MAXS) {
        Py_DECREF(fast);
        free_config();
        PyErr_SetString(PyExc_ValueError, "at most 32 shapes");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < ns; i++) {
        if (!one_shape(PySequence_Fast_GET_ITEM(fast, i), &shapes[i])) {
            n_shapes = (int)i + 1;
            Py_DECREF(fast);
            free_config();
            return NULL;
        }
        n_shapes = (int)i + 1;
    }
    Py_DECREF(fast);
    memset(anchor_shaped, 0, sizeof anchor_shaped);
    memset(n_of_anchor, 0, sizeof n_of_anchor);
    for (int i = 0; i < n_shapes; i++) {
        int a = shapes[i].anchor;
        anchor_shaped[a] = 1;
        of_anchor[a][n_of_anchor[a]++] = i;
    }
    fill_classes();
    configure_search();
    Py_RETURN_NONE;
}

static int has_text(const char *s, const char *e, char **texts, const Py_ssize_t *lens, int n) {
    for (int a = 0; a < n; a++)
        if (e - s >= lens[a] && memmem(s, (size_t)(e - s), texts[a], (size_t)lens[a])) return 1;
    return 0;
}

/* -- scanning a buffer ---------------------------------------------------------------------- */
typedef struct {
    int ok, family, shape;
    buf_t lines, cols[MAXC], pp, ppk, tagidx;
    const char *tag_s[255], *tag_e[255];
    int ntags;
    const char *proc_s, *proc_e;
    int have_proc, head_unpaired, saw_record, have_pending, first_st[5], last_md[2], have_stamp;
    double pending[MAXC];
    int pending_shape, recheck;
    Py_ssize_t n_lines, n;
} state_t;

static int line_of(state_t *S, const char *ls, const char *le, int which, int year) {
    mctx_t C;
    const shape_t *sh = NULL;
    const char *q = NULL;
    for (int j = 0; j < n_of_anchor[which] && !q; j++) {
        int s = of_anchor[which][j];
        for (int i = 0; i < ncols; i++) C.v[i] = NAN;
        C.n_undo = 0, C.depth = 0, C.pp = &S->pp, C.k = 0, C.sum = 0.0, C.clock_kind = -1, C.year = year;
        C.cap_s[0] = C.cap_s[1] = C.cap_e[0] = C.cap_e[1] = NULL;
        Py_ssize_t pp_n = S->pp.n;
        q = run(shapes[s].ops, shapes[s].nops, ls, le, &C);
        if (q && !end_of_line(q, le)) q = NULL;
        if (q) sh = &shapes[s];
        else S->pp.n = pp_n;
    }
    if (!sh) return 0;
    if (S->family >= 0 && S->family != sh->family) return 0; /* several families: the line parser's */
    S->family = sh->family;
    int edged = family_edged[sh->family];
    if (sh->has_process || edged) {
        const char *ps = C.cap_s[CAP_PROCESS], *pe = C.cap_e[CAP_PROCESS];
        if (S->have_proc) {
            int same = (ps == NULL && S->proc_s == NULL) ||
                       (ps && S->proc_s && pe - ps == S->proc_e - S->proc_s && memcmp(ps, S->proc_s, (size_t)(pe - ps)) == 0);
            if (!same) return 0; /* several processes: the line parser pairs per process */
        } else {
            if (ps && (has_text(ps, pe, anch, anch_len, n_anch) || has_text(ps, pe, forbid, forbid_len, n_forbid)))
                return 0;
            S->proc_s = ps, S->proc_e = pe, S->have_proc = 1;
        }
    }
    if (C.clock_kind == CLOCK_YEARLESS) { /* every year-less stamp moves the line parser's year reader */
        if (S->have_stamp) {
            int pm = S->last_md[0], pd = S->last_md[1];
            if ((C.st[0] < pm || (C.st[0] == pm && C.st[1] < pd)) && pm - C.st[0] >= 6) return 0; /* a new year */
        } else {
            memcpy(S->first_st, C.st, sizeof S->first_st);
            S->have_stamp = 1;
        }
        S->last_md[0] = C.st[0], S->last_md[1] = C.st[1];
    }
    S->recheck = sh->recheck;
    if (sh->pairs) {
        memcpy(S->pending, C.v, sizeof S->pending);
        S->pending_shape = (int)(sh - shapes);
        S->have_pending = 1;
        return 1;
    }
    if (S->shape >= 0 && S->shape != (int)(sh - shapes)) return 0; /* records of two shapes */
    S->shape = (int)(sh - shapes);
    if (sh->refuse_col >= 0 && C.k > 0 && fabs(C.v[sh->refuse_col] - C.sum) <= sh->within + sh->per_item * C.k)
        return 0; /* a line of an older era: the line parser's */
    for (int i = 0; i < sh->nderive; i++)
        if (C.k > 0) C.v[sh->dst[i]] = C.v[sh->src[i]] / C.k;
    if (S->have_pending) {
        const shape_t *ps = &shapes[S->pending_shape];
        for (int i = 0; i < ps->npass; i++) C.v[ps->pass[i]] = S->pending[ps->pass[i]];
        S->have_pending = 0;
    } else if (edged && !S->saw_record) {
        S->head_unpaired = 1;
    }
    S->saw_record = 1;
    if (sh->has_rank) {
        const char *ts = C.cap_s[CAP_RANK], *te = C.cap_e[CAP_RANK];
        int t;
        if (!ts) ts = te = ls;
        for (t = 0; t < S->ntags; t++)
            if (S->tag_e[t] - S->tag_s[t] == te - ts && memcmp(S->tag_s[t], ts, (size_t)(te - ts)) == 0) break;
        if (t == S->ntags) {
            if (t == 255) return 0;
            S->tag_s[t] = ts, S->tag_e[t] = te, S->ntags++;
        }
        unsigned char ti = (unsigned char)t;
        if (push(&S->tagidx, &ti, 1)) return -1;
    }
    unsigned char k = (unsigned char)C.k;
    if (push(&S->ppk, &k, 1)) return -1;
    int64_t no = S->n_lines + 1;
    if (push(&S->lines, &no, sizeof no)) return -1;
    if (S->cols[0].n + (Py_ssize_t)sizeof(double) > S->cols[0].cap) { /* the columns grow together */
        for (int i = 0; i < ncols; i++)
            if (push(&S->cols[i], &C.v[i], sizeof(double))) return -1;
    } else {
        for (int i = 0; i < ncols; i++) {
            memcpy(S->cols[i].v + S->cols[i].n, &C.v[i], sizeof(double));
            S->cols[i].n += sizeof(double);
        }
    }
    S->n++;
    return 1;
}

typedef struct {
    state_t S;
    const char *buf, *end, *bad_ls;
    int year;
} scan_job_t;

static int shaped_anchor(int which) { return which >= 0 && which < MAXA && anchor_shaped[which]; }

static void scan_loop(scan_job_t *J) {
    state_t *S = &J->S;
    const char *buf = J->buf, *end = J->end;
    const char *counted = buf;  /* newlines before this point are in S->n_lines */
    const char *last_ls = NULL; /* the start of the last line read */
    if (end == buf || end[-1] != '\n') S->ok = 0;
    const char *from = buf;
    while (S->ok == 1) {
        int which = -1;
        const char *start = find_anchor(from, end, &which);
        if (!start) break;
        const char *ls = line_start(buf, start);
        J->bad_ls = ls;
        if (ls == last_ls) { /* a second anchor on a line already read */
            S->ok = 0;
            break;
        }
        last_ls = ls;
        const char *le = memchr(start, '\n', (size_t)(end - start));
        S->n_lines += count_nl(counted, ls);
        counted = ls;
        int shaped = shaped_anchor(which);
        int r = shaped ? line_of(S, ls, le, which, J->year) : 0;
        if (r <= 0) {
            S->ok = r == 0 && shaped ? 2 : r; /* 2: a shaped line this scanner does not read */
            break;
        }
        /* A line that fits a shape holds no second anchor unless its shape could spell one
         * (fastscan.py says which at configure: a text of the shape or a run of characters
         * that could hold an anchor; a process tag is checked above): then look again. */
        if (S->recheck && find_anchor(start + 1, le, &which)) {
            S->ok = 0;
            break;
        }
        S->n_lines++;
        counted = le + 1;
        from = le + 1;
    }
    if (S->ok == 1) S->n_lines += count_nl(counted, end);
}

static PyObject *bytes_of(const buf_t *b) { return PyBytes_FromStringAndSize(b->v ? b->v : "", b->n); }

static PyObject *scan(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    int year, where = 0;
    if (!PyArg_ParseTuple(args, "y*i|p", &view, &year, &where)) return NULL;
    if (n_anch == 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    scan_job_t *J = (scan_job_t *)calloc(1, sizeof *J);
    if (!J) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    J->buf = (const char *)view.buf, J->end = J->buf + view.len, J->bad_ls = J->buf, J->year = year;
    J->S.ok = 1, J->S.family = -1, J->S.shape = -1;
    Py_BEGIN_ALLOW_THREADS
    scan_loop(J);
    Py_END_ALLOW_THREADS
    state_t *S = &J->S;
    PyObject *result = NULL;
    if (S->ok < 0) {
        PyErr_NoMemory();
    } else if (where) { /* where(): the start of the line the scan stopped at, -1 if none */
        result = PyLong_FromSsize_t(S->ok == 1 ? -1 : (Py_ssize_t)(J->bad_ls - J->buf));
    } else if (S->ok == 2) {
        Py_INCREF(Py_False);
        result = Py_False;
    } else if (S->ok == 0) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else {
        PyObject *tags = PyList_New(S->ntags);
        for (int t = 0; tags && t < S->ntags; t++)
            PyList_SET_ITEM(tags, t, PyBytes_FromStringAndSize(S->tag_s[t], S->tag_e[t] - S->tag_s[t]));
        PyObject *cols = PyList_New(ncols);
        for (int i = 0; cols && i < ncols; i++) PyList_SET_ITEM(cols, i, bytes_of(&S->cols[i]));
        PyObject *edge = Py_None;
        Py_INCREF(Py_None);
        if (S->family >= 0 && family_edged[S->family]) {
            Py_DECREF(Py_None);
            PyObject *tail = Py_None;
            Py_INCREF(Py_None);
            if (S->have_pending) {
                const shape_t *ps = &shapes[S->pending_shape];
                Py_DECREF(Py_None);
                tail = PyTuple_New(ps->npass);
                for (int i = 0; tail && i < ps->npass; i++)
                    PyTuple_SET_ITEM(tail, i, PyFloat_FromDouble(S->pending[ps->pass[i]]));
            }
            PyObject *proc = S->proc_s ? PyBytes_FromStringAndSize(S->proc_s, S->proc_e - S->proc_s)
                                       : (Py_INCREF(Py_None), Py_None);
            edge = Py_BuildValue("(NiNi(iiiii)(ii))", proc, S->head_unpaired, tail, S->have_stamp, S->first_st[0],
                                 S->first_st[1], S->first_st[2], S->first_st[3], S->first_st[4], S->last_md[0],
                                 S->last_md[1]);
        }
        if (tags && cols && edge)
            result = Py_BuildValue("(niinNNNNNNN)", S->n_lines, S->family, S->shape, S->n, bytes_of(&S->lines), cols,
                                   tags, bytes_of(&S->tagidx), bytes_of(&S->pp), bytes_of(&S->ppk), edge);
        else {
            Py_XDECREF(tags);
            Py_XDECREF(cols);
            Py_XDECREF(edge);
        }
    }
    free(S->lines.v), free(S->pp.v), free(S->ppk.v), free(S->tagidx.v);
    for (int i = 0; i < MAXC; i++) free(S->cols[i].v);
    free(J);
    PyBuffer_Release(&view);
    return result;
}

/* anchor_lines(buf) -> bytes of int64: the start of every line of buf holding an anchor, in order
 * (the line parser needs to see only these lines, and the lines continuing an args dump). */
static PyObject *anchor_lines(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    if (n_anch == 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    const char *buf = (const char *)view.buf, *end = buf + view.len;
    buf_t out = {0};
    int nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    const char *from = buf;
    for (;;) {
        int which;
        const char *start = find_anchor(from, end, &which);
        if (!start) break;
        int64_t at = line_start(buf, start) - buf;
        if (push(&out, &at, sizeof at)) {
            nomem = 1;
            break;
        }
        const char *le = memchr(start, '\n', (size_t)(end - start));
        if (!le) break;
        from = le + 1;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    PyObject *r = nomem ? PyErr_NoMemory() : PyBytes_FromStringAndSize(out.v ? out.v : "", out.n);
    free(out.v);
    return r;
}

static PyMethodDef methods[] = {
    {"anchor_lines", anchor_lines, METH_VARARGS, "Starts of the lines holding an anchor."},
    {"configure", configure, METH_VARARGS, "Set the anchors and the shapes (see fastscan.py)."},
    {"scan", scan, METH_VARARGS, "Scan a buffer of whole lines: columns of its shaped lines, or None / False."},
    {"search", search, METH_VARARGS, "The anchor search in use (0 portable, 1 SSSE3, 2 AVX2); set it for tests."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_fastscan", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__fastscan(void) { return PyModule_Create(&module); }
