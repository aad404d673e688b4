/* Optional native scanner for tui/core/parsing/fastscan.py (the pure-Python path is the
 * reference; tests compare both with the line parser).
 *
 * scan(buf) reads a buffer of whole lines. It returns None unless every line is either a
 * canonical SGLang decode line of one rank tag,
 *   [YYYY-MM-DD HH:MM:SS<TAGS>] Decode batch[,.] #running-req: D, #token: D, token usage: D.D,
 *   accept len: D.D, accept rate: D.D, (cuda|npu|cpu) graph: (True|False),
 *   gen throughput (token/s): D.D, #queue-req: D[, ?][\r]\n
 * or a line without "Decode batch" and without any of the blocker texts the line parser must
 * see. Otherwise it returns
 *   (n_lines, n, tags, first_ts, last_ts, running, accept_len, accept_rate, throughput)
 * where the four columns are bytes holding C doubles in line order; False when the lines are
 * canonical so far but carry several rank tags (the Python path groups them).
 */
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

static const char *BLOCKERS[] = {"Decode batch", "'", "ready to roll", "Started server", "vLLM API",
                                 "metrics:", "Avg prompt", "draft acceptance", "LLM engine", NULL};

typedef struct {
    double *v;
    Py_ssize_t n, cap;
} col_t;

static int col_push(col_t *c, double x) {
    if (c->n == c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 4096;
        double *v = (double *)realloc(c->v, (size_t)cap * sizeof(double));
        if (!v) return -1;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = x;
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* literal at *p (within [p, end)); advances */
static int lit(const char **p, const char *end, const char *s) {
    size_t k = strlen(s);
    if ((size_t)(end - *p) < k || memcmp(*p, s, k) != 0) return 0;
    *p += k;
    return 1;
}

/* \d+ ; returns start/len */
static int digits(const char **p, const char *end) {
    const char *q = *p;
    while (q < end && is_digit(*q)) q++;
    if (q == *p) return 0;
    *p = q;
    return 1;
}

static const double POW10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* \d+ or \d+\.\d+ as a double, without strtod (locale-independent): the digits as an exact
 * integer (< 2^53) divided by an exact power of ten is correctly rounded by IEEE division, so
 * it equals Python's float() of the same text. Longer numbers are refused (-> Python path). */
static int number(const char **p, const char *end, int want_fraction, double *out) {
    const char *q = *p;
    unsigned long long m = 0;
    int nd = 0, frac = 0;
    while (q < end && is_digit(*q)) {
        if (++nd > 15) return 0;
        m = m * 10 + (unsigned long long)(*q++ - '0');
    }
    if (nd == 0) return 0;
    if (want_fraction) {
        if (q >= end || *q != '.') return 0;
        q++;
        const char *f = q;
        while (q < end && is_digit(*q)) {
            if (++nd > 15) return 0;
            m = m * 10 + (unsigned long long)(*q++ - '0');
        }
        frac = (int)(q - f);
        if (frac == 0) return 0;
    }
    *out = (double)m / POW10[frac];
    *p = q;
    return 1;
}

static int decimal(const char **p, const char *end, double *out) { return number(p, end, 1, out); }

static int integer(const char **p, const char *end, double *out) { return number(p, end, 0, out); }

/* ( [A-Z][A-Z_]*\d+)* exactly over [s, e) */
static int tags_ok(const char *s, const char *e) {
    const char *p = s;
    while (p < e) {
        if (*p != ' ') return 0;
        p++;
        if (p >= e || !(*p >= 'A' && *p <= 'Z')) return 0;
        p++;
        while (p < e && ((*p >= 'A' && *p <= 'Z') || *p == '_')) p++;
        if (p >= e || !is_digit(*p)) return 0;
        while (p < e && is_digit(*p)) p++;
    }
    return 1;
}

static int has(const char *s, const char *e, const char *needle) {
    size_t k = strlen(needle);
    return (size_t)(e - s) >= k && memmem(s, (size_t)(e - s), needle, k) != NULL;
}

/* One decode line [s, e) (e at the '\n'). Returns 1 and fills the values, 0 if not canonical. */
static int decode_line(const char *s, const char *e, const char **tag_s, const char **tag_e, double v[4]) {
    const char *p = s;
    /* "[YYYY-MM-DD HH:MM:SS" */
    static const char shape[] = "[dddd-dd-dd dd:dd:dd";
    if (e - p < 20) return 0;
    for (int i = 0; i < 20; i++) {
        char c = p[i], want = shape[i];
        if (want == 'd' ? !is_digit(c) : c != want) return 0;
    }
    p += 20;
    const char *t = p;
    while (p < e && *p != ']' ) p++;
    if (p >= e) return 0;
    if (!tags_ok(t, p)) return 0;
    *tag_s = t;
    *tag_e = p;
    if (!lit(&p, e, "] Decode batch")) return 0;
    if (p >= e || (*p != ',' && *p != '.')) return 0;
    p++;
    double dummy;
    if (!lit(&p, e, " #running-req: ") || !integer(&p, e, &v[0])) return 0;
    if (!lit(&p, e, ", #token: ") || !digits(&p, e)) return 0;
    if (!lit(&p, e, ", token usage: ") || !decimal(&p, e, &dummy)) return 0;
    if (!lit(&p, e, ", accept len: ") || !decimal(&p, e, &v[1])) return 0;
    if (!lit(&p, e, ", accept rate: ") || !decimal(&p, e, &v[2])) return 0;
    if (!lit(&p, e, ", ")) return 0;
    if (!(lit(&p, e, "cuda") || lit(&p, e, "npu") || lit(&p, e, "cpu"))) return 0;
    if (!lit(&p, e, " graph: ")) return 0;
    if (!(lit(&p, e, "True") || lit(&p, e, "False"))) return 0;
    if (!lit(&p, e, ", gen throughput (token/s): ") || !decimal(&p, e, &v[3])) return 0;
    if (!lit(&p, e, ", #queue-req: ") || !digits(&p, e)) return 0;
    if (p < e && *p == ',') {
        p++;
        if (p < e && *p == ' ') p++;
    }
    if (p < e && *p == '\r') p++;
    return p == e;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    const char *buf = (const char *)view.buf, *end = buf + view.len;
    col_t cols[4] = {{0}};
    Py_ssize_t n_lines = 0;
    const char *tag_s = NULL, *tag_e = NULL, *first_ts = NULL, *last_ts = NULL;
    int ok = 1;
    const char *p = buf;
    Py_BEGIN_ALLOW_THREADS
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) { ok = 0; break; } /* the buffer must end with a newline */
        n_lines++;
        const char *d = memmem(p, (size_t)(nl - p), "Decode batch", 12);
        if (d) {
            const char *ts, *te;
            double v[4];
            if (!decode_line(p, nl, &ts, &te, v)) { ok = 0; break; }
            if (tag_s == NULL) {
                tag_s = ts;
                tag_e = te;
                first_ts = p + 1;
            } else if ((te - ts) != (tag_e - tag_s) || memcmp(ts, tag_s, (size_t)(te - ts)) != 0) {
                ok = 2; /* several rank tags: the Python path splits them */
                break;
            }
            last_ts = p + 1;
            int bad = 0;
            for (int i = 0; i < 4; i++) bad |= col_push(&cols[i], v[i]);
            if (bad) { ok = -1; break; }
        } else {
            for (int i = 0; BLOCKERS[i]; i++) {
                if (has(p, nl, BLOCKERS[i])) { ok = 0; break; }
            }
            if (!ok) break;
        }
        p = nl + 1;
    }
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (ok == -1) {
        PyErr_NoMemory();
    } else if (ok == 0) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else if (ok == 2) {
        Py_INCREF(Py_False);
        result = Py_False;
    } else {
        Py_ssize_t n = cols[0].n;
        result = Py_BuildValue(
            "(nny#y#y#y#y#y#y#)", n_lines, n,
            tag_s ? tag_s : "", (Py_ssize_t)(tag_s ? tag_e - tag_s : 0),
            first_ts ? first_ts : "", (Py_ssize_t)(first_ts ? 19 : 0),
            last_ts ? last_ts : "", (Py_ssize_t)(last_ts ? 19 : 0),
            (const char *)cols[0].v, (Py_ssize_t)(n * sizeof(double)),
            (const char *)cols[1].v, (Py_ssize_t)(n * sizeof(double)),
            (const char *)cols[2].v, (Py_ssize_t)(n * sizeof(double)),
            (const char *)cols[3].v, (Py_ssize_t)(n * sizeof(double)));
    }
    for (int i = 0; i < 4; i++) free(cols[i].v);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Scan a buffer of whole lines for canonical SGLang decode lines."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastscan(void) { return PyModule_Create(&module); }
