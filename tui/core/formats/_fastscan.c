/* Optional native scanner for tui/core/formats/fastscan.py: one interpreter of the line shapes the
 * families declare (their family.toml), with no family in it. The pure-Python scanner (regular
 * expressions compiled from the same shapes) is the reference; the tests check that both give what
 * the line parser gives, on generated and real lines, for every family (a family defined only in
 * tests included).
 *
 * configure(anchors, forbidden, ncols, ts_col, elapsed_col, shapes) takes grammar.ANCHORS (bytes,
 * at least 3 long each: every literal text the line parser acts on), the texts a process tag may
 * not hold, the number of output columns (fastscan.LAYOUT), the columns of the clocks, and each
 * shape as (anchor index, family index, pairs, pass columns, derived (dst, src) pairs, (sum_match
 * value column, the column it fills, within, per item, offsets), ops): the program of shape_program.py, ops (code, a, b, text) with
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
 * have_stamp, first_stamp, last_md) for the family's plug-in to settle (scan_shapes.Edge).
 * Numbers are converted without strtod: locale-independent, and correctly rounded (an exact
 * integer of at most 15 digits divided by an exact power of ten), i.e. equal to float().
 *
 * The parts, by concept: this file (the program's types, scanning a buffer, the module);
 * _fastscan_configure.h (configure(): the program read in); _fastscan_match.h (matching one line
 * against a shape's program); _fastscan_search.h / _fastscan_simd.h (finding the anchors);
 * _fastscan_text.h (output buffers and text helpers).
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
    int match_val, match_dst, n_off; /* sum_match: value column, the column it fills, offsets */
    double within, per_item, off[4];
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

#include "_fastscan_match.h"     /* matching a line: the program's interpreter */
#include "_fastscan_configure.h" /* configure(): the program read in */

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
    if (sh->match_dst >= 0 && C.k > 0 && C.v[sh->match_val] == C.v[sh->match_val]) {
        /* the era's evidence: which declared offset the value exceeds its list's sum by */
        int j = 0;
        while (j < sh->n_off && !(fabs(C.v[sh->match_val] - sh->off[j] - C.sum) <= sh->within + sh->per_item * C.k)) j++;
        C.v[sh->match_dst] = (double)j;
    }
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
