/* Optional native scanner for tui/core/formats/fastscan.py (the pure-Python scanner, whose
 * patterns are compiled from tui/core/formats/grammar.py, is the reference; the tests check
 * that both give what the line parser gives, on generated and real lines).
 *
 * configure(anchors) takes grammar.ANCHORS (bytes, at least 3 long each): every literal text
 * the line parser acts on, in the order of grammar.ANCHORS (0 "Decode batch",
 * 1 "SpecDecoding metrics:", 3 "Avg prompt throughput" are the ones with canonical shapes).
 *
 * scan(buf, year) reads a buffer of whole lines. Anchors are found with a Wu-Manber skip loop
 * (_fastscan_search.h: one pass finds them all, most bytes never looked at one by one), behind a
 * SIMD filter on x86-64 (_fastscan_simd.h); every line holding an anchor must be a line of the
 * common form of grammar.SHAPES, else the result is None (an anchor without a shape: the caller
 * reads the buffer with the line parser) or False (a shaped anchor on a line of another form:
 * the Python scanner may read it). scan(buf, year, True) gives instead the offset of the line
 * the scan stopped at (the first one it cannot read, so that the caller reads that line apart
 * and the rest fast), or -1 when it reads the whole buffer. The result is
 *   (n_lines, family, n, line_nos, cols, tags, tag_idx, pp, pp_k, vllm)
 * family 0 none, 1 sglang, 2 vllm; line_nos int64 (1-based within buf); cols 15 columns of n
 * doubles in the order of columns.NUMERIC_FIELDS plus the paired engine index, NaN where not
 * printed; tags the distinct
 * SGLang rank tags and tag_idx (uint8) each record's; pp the per-position values, pp_k (uint8)
 * how many each record has; vllm None or (proc, head_unpaired, tail_engine, have_stamp,
 * first_stamp, last_md) for the caller's engine pairing and year check.
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

#define MAXA 32
#define NCOL 16 /* columns.NUMERIC_FIELDS, then the paired vLLM engine index */
enum { C_TS, C_AL, C_AR, C_ACC, C_DRAFT, C_ND, C_RUN, C_TOK, C_USAGE, C_TP, C_QUEUE, C_ALD, C_ARD, C_ELAPSED, C_SYSEFF, C_ENG };
/* the index in the anchors of each shape this scanner reads (configure: -1 for none) */
static int A_DECODE = -1, A_SPEC = -1, A_ENGINE = -1, A_LLAMA = -1;

static char *anch[MAXA];
static Py_ssize_t anch_len[MAXA];
static int n_anch = 0;

#include "_fastscan_search.h"
#include "_fastscan_simd.h"
#include "_fastscan_text.h"

static PyObject *configure(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *seq;
    int dec = -1, spec = -1, eng = -1, llama = -1;
    if (!PyArg_ParseTuple(args, "O|(iiii)", &seq, &dec, &spec, &eng, &llama)) return NULL;
    PyObject *fast = PySequence_Fast(seq, "anchors must be a sequence");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n < 4 || n > MAXA) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "between 4 and 32 anchors");
        return NULL;
    }
    for (int i = 0; i < n_anch; i++) free(anch[i]);
    n_anch = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        char *s;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(PySequence_Fast_GET_ITEM(fast, i), &s, &len) < 0 || len < 3) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "anchors are bytes of length >= 3");
            return NULL;
        }
        anch[i] = (char *)malloc((size_t)len);
        memcpy(anch[i], s, (size_t)len);
        anch_len[i] = len;
        n_anch++;
    }
    Py_DECREF(fast);
    A_DECODE = dec, A_SPEC = spec, A_ENGINE = eng, A_LLAMA = llama;
    configure_search();
    Py_RETURN_NONE;
}

static int has_anchor(const char *s, const char *e) {
    for (int a = 0; a < n_anch; a++)
        if (e - s >= anch_len[a] && memmem(s, (size_t)(e - s), anch[a], (size_t)anch_len[a])) return 1;
    return 0;
}

typedef struct {
    int ok, family;
    buf_t lines, cols[NCOL], pp, ppk, tagidx;
    const char *tag_s[64], *tag_e[64];
    int ntags;
    const char *proc_s, *proc_e;
    int have_proc, head_unpaired, saw_spec, saw_engine, have_pending, first_st[5], last_md[2], have_stamp;
    double pending[3];
    Py_ssize_t n_lines, n;
} state_t;

static int line_of(state_t *S, const char *ls, const char *le, int which, int year) {
    double v[NCOL];
    for (int i = 0; i < NCOL; i++) v[i] = NAN;
    if (which == A_DECODE) {
        const char *ts, *te;
        if (S->family == 2 || !decode_line(ls, le, &ts, &te, v)) return 0;
        S->family = 1;
        int t;
        for (t = 0; t < S->ntags; t++)
            if (S->tag_e[t] - S->tag_s[t] == te - ts && memcmp(S->tag_s[t], ts, (size_t)(te - ts)) == 0) break;
        if (t == S->ntags) {
            if (t == 64) return 0;
            S->tag_s[t] = ts, S->tag_e[t] = te, S->ntags++;
        }
        unsigned char ti = (unsigned char)t;
        if (push(&S->tagidx, &ti, 1)) return -1;
    } else {
        if (S->family == 1) return 0;
        const char *p = ls, *ps, *pe;
        int st[5];
        double frac;
        if (!vllm_prefix(&p, le, &ps, &pe, st, &frac)) return 0;
        int same = S->have_proc ? ((ps == NULL && S->proc_s == NULL) ||
                                   (ps && S->proc_s && pe - ps == S->proc_e - S->proc_s &&
                                    memcmp(ps, S->proc_s, (size_t)(pe - ps)) == 0))
                                : 1;
        if (!same) return 0;
        if (!S->have_proc) {
            if (ps && has_anchor(ps, pe)) return 0;
            if (ps && memmem(ps, (size_t)(pe - ps), "Engine ", 7)) return 0;
            S->proc_s = ps, S->proc_e = pe, S->have_proc = 1;
        }
        S->family = 2;
        /* every vLLM stamp moves the line parser's year reader: track them all */
        if (S->have_stamp) {
            int pm = S->last_md[0], pd = S->last_md[1];
            if ((st[0] < pm || (st[0] == pm && st[1] < pd)) && pm - st[0] >= 6) return 0; /* a new year */
        } else {
            memcpy(S->first_st, st, sizeof S->first_st);
            S->have_stamp = 1;
        }
        S->last_md[0] = st[0], S->last_md[1] = st[1];
        if (which == A_ENGINE) {
            double ev[3];
            if (!engine_body(p, le, ev)) return 0;
            memcpy(S->pending, ev, sizeof ev);
            S->have_pending = 1;
            S->saw_engine = 1;
            return 1;
        }
        unsigned char k;
        if (!spec_body(p, le, v, &S->pp, &k)) return 0;
        v[C_TS] = (double)(days_from_civil(year, st[0], st[1]) * 86400 + st[2] * 3600 + st[3] * 60 + st[4]) + frac;
        if (S->have_pending) {
            v[C_RUN] = S->pending[2];
            v[C_TP] = S->pending[1];
            v[C_ENG] = S->pending[0];
            S->have_pending = 0;
        } else if (!S->saw_spec) {
            S->head_unpaired = 1;
        }
        S->saw_spec = 1;
        if (push(&S->ppk, &k, 1)) return -1;
    }
    int64_t no = S->n_lines + 1;
    if (push(&S->lines, &no, sizeof no)) return -1;
    if (S->n * (Py_ssize_t)sizeof(double) == S->cols[0].cap) { /* the columns grow together */
        for (int i = 0; i < NCOL; i++)
            if (push(&S->cols[i], &v[i], sizeof(double))) return -1;
    } else {
        for (int i = 0; i < NCOL; i++) {
            memcpy(S->cols[i].v + S->cols[i].n, &v[i], sizeof(double));
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
        int shaped = which >= 0 && (which == A_DECODE || which == A_SPEC || which == A_ENGINE || which == A_LLAMA);
        int r = shaped && which != A_LLAMA ? line_of(S, ls, le, which, J->year) : 0; /* llama.cpp: Python's */
        if (r <= 0) {
            S->ok = r == 0 && shaped ? 2 : r; /* 2: not the common form; maybe the grammar's wider one */
            break;
        }
        /* A line that fits a shape holds no second anchor (its parts are fixed text, numbers,
         * rank tags, a file name and a process tag checked above, none of which can hold
         * one): go on after it, its newline counted. */
        S->n_lines++;
        counted = le + 1;
        from = le + 1;
    }
    if (S->ok == 1) S->n_lines += count_nl(counted, end);
}

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
    J->S.ok = 1;
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
        PyObject *cols = PyList_New(NCOL);
        for (int i = 0; cols && i < NCOL; i++)
            PyList_SET_ITEM(cols, i, PyBytes_FromStringAndSize(S->cols[i].v ? S->cols[i].v : "", S->cols[i].n));
        PyObject *vllm = Py_None;
        Py_INCREF(Py_None);
        if (S->family == 2) {
            Py_DECREF(Py_None);
            PyObject *tail = S->have_pending ? Py_BuildValue("(ddd)", S->pending[0], S->pending[1], S->pending[2])
                                             : (Py_INCREF(Py_None), Py_None);
            PyObject *proc = S->proc_s ? PyBytes_FromStringAndSize(S->proc_s, S->proc_e - S->proc_s)
                                       : (Py_INCREF(Py_None), Py_None);
            vllm = Py_BuildValue("(NiNi(iiiii)(ii))", proc, S->head_unpaired, tail, S->have_stamp, S->first_st[0],
                                 S->first_st[1], S->first_st[2], S->first_st[3], S->first_st[4], S->last_md[0],
                                 S->last_md[1]);
        }
        if (tags && cols && vllm)
            result = Py_BuildValue("(ninNNNNy#y#N)", S->n_lines, S->family, S->n,
                                   PyBytes_FromStringAndSize(S->lines.v ? S->lines.v : "", S->lines.n), cols, tags,
                                   PyBytes_FromStringAndSize(S->tagidx.v ? S->tagidx.v : "", S->tagidx.n),
                                   S->pp.v ? S->pp.v : "", S->pp.n, S->ppk.v ? S->ppk.v : "", S->ppk.n, vllm);
        else {
            Py_XDECREF(tags);
            Py_XDECREF(cols);
            Py_XDECREF(vllm);
        }
    }
    free(S->lines.v), free(S->pp.v), free(S->ppk.v), free(S->tagidx.v);
    for (int i = 0; i < NCOL; i++) free(S->cols[i].v);
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
    {"configure", configure, METH_VARARGS, "Set the anchors (grammar.ANCHORS as bytes)."},
    {"scan", scan, METH_VARARGS, "Scan a buffer of whole lines: columns of its canonical lines, or None."},
    {"search", search, METH_VARARGS, "The anchor search in use (0 portable, 1 SSSE3, 2 AVX2); set it for tests."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_fastscan", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__fastscan(void) { return PyModule_Create(&module); }
