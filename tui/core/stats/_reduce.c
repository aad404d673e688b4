/* Optional native form of tui/core/stats/precompute.py's reduction (the Python code is the
 * reference; tests/test_reduce_native.py checks that both give identical results, bit for bit,
 * on generated and real runs).
 *
 * precompute(sglang, cols, n, pp, k, rank_idx, n_groups) reduces a run of records that is in the
 * common form, and returns None for anything else (the caller then runs the Python code):
 *   cols      10 buffers of n doubles, in the order of checks.RANGES (accept_len, accept_rate,
 *             accept_len_derived, accept_rate_derived, accepted, drafted, num_drafts,
 *             running_req, throughput, timestamp);
 *   pp, k     the per-position rates, n * k doubles (None and 0: the run has none);
 *   rank_idx  None, or n bytes: each record's rank group (groups in order of first appearance).
 * The common form: each column printed on every record or on none; every value finite and
 * within its bounds; accepted <= drafted; the weights (drafts, drafted tokens, #running-req)
 * positive; per-position rates within [0, 1] and k <= 32. Nothing is refused then, so the
 * result is what clean() + prepare() + bin_chunks() give:
 *   (full, prepared, by_rank, bins)
 *   full      10 items: None (not printed) or (min, max)
 *   prepared  (n, chunks[6], pooled_len, pooled_rate, accepted, drafted, positions, first_ts,
 *             last_ts); chunks in metrics.SERIES order, each None or a ColumnChunk state
 *             (n, sum, m2, min, max, first, last, wsum, wxsum, wn, tail, prefix, small) with
 *             prefix as bytes of doubles; pooled as (n, num, den, num_prefix, den_prefix)
 *   by_rank   None, or one prepared per rank group
 *   bins      [(bin, ColumnChunk state or None, RatioChunk state or None), ...] ascending
 * Sums are exact (math.fsum's algorithm: correctly rounded, so equal to math.fsum whatever the
 * order); running sums are left to right, like itertools.accumulate.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NC 10
enum { AL, AR, ALD, ARD, ACC, DR, ND, RUN, TP, TS };
static const double LO[NC] = {1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -9007199254740992.0};
static const double HI[NC] = {65.0, 1.0, 65.0, 1.0, 9007199254740992.0, 9007199254740992.0,
                              9007199254740992.0, 9007199254740992.0, 9007199254740992.0, 9007199254740992.0};
#define EPS 1e-9
#define TAIL 400
#define SMALL 16
#define MAX_POSITIONS 32
#define NBINS 64

/* ---- math.fsum (Shewchuk's partials, CPython's rounding fix-up); finite inputs ---- */
typedef struct {
    double p[64];
    int n, bad;
} msum_t;

static void ms_init(msum_t *m) { m->n = 0, m->bad = 0; }

static void ms_add(msum_t *m, double x) {
    int i = 0;
    for (int j = 0; j < m->n; j++) {
        double y = m->p[j];
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y;
            y = t;
        }
        double hi = x + y, yr = hi - x, lo = y - yr;
        if (lo != 0.0) m->p[i++] = lo;
        x = hi;
    }
    m->n = i;
    if (x != 0.0) {
        if (!isfinite(x) || m->n >= 64) {
            m->bad = 1;
            m->n = 0;
            return;
        }
        m->p[m->n++] = x;
    }
}

static double ms_result(const msum_t *m) {
    int n = m->n;
    double hi = 0.0, lo = 0.0, x, y, yr;
    if (n > 0) {
        hi = m->p[--n];
        while (n > 0) {
            x = hi;
            y = m->p[--n];
            hi = x + y;
            yr = hi - x;
            lo = y - yr;
            if (lo != 0.0) break;
        }
        if (n > 0 && ((lo < 0.0 && m->p[n - 1] < 0.0) || (lo > 0.0 && m->p[n - 1] > 0.0))) {
            y = lo * 2.0;
            x = hi + y;
            yr = x - hi;
            if (y == yr) hi = x;
        }
    }
    return hi;
}

/* ---- the run ---- */
typedef struct {
    Py_ssize_t n;
    const double *c[NC];
    int present[NC]; /* printed on every record (1) or on none (0) */
    double mn[NC], mx[NC];
    const double *pp;
    int k;
    int sglang;
    int overflow; /* an exact sum overflowed: give up */
} run_t;

#define AT(col, idx, i) ((col)[(idx) ? (idx)[i] : (i)])

static PyObject *prefix_of(run_t *R, const double *x, const int32_t *idx, Py_ssize_t m) {
    PyObject *b = PyBytes_FromStringAndSize(NULL, (m + 1) * (Py_ssize_t)sizeof(double));
    if (!b) return NULL;
    double *p = (double *)PyBytes_AS_STRING(b);
    double s = 0.0;
    p[0] = 0.0;
    for (Py_ssize_t i = 0; i < m; i++) {
        s = s + AT(x, idx, i);
        p[i + 1] = s;
    }
    (void)R;
    return b;
}

static double fsum_of(run_t *R, const double *x, const int32_t *idx, Py_ssize_t m) {
    msum_t s;
    ms_init(&s);
    for (Py_ssize_t i = 0; i < m; i++) ms_add(&s, AT(x, idx, i));
    R->overflow |= s.bad;
    return ms_result(&s);
}

/* ColumnChunk.of(xs, ws) over x[idx[0..m)]; w NULL: unweighted; m > 0 */
static PyObject *column_chunk(run_t *R, const double *x, const double *w, const int32_t *idx, Py_ssize_t m) {
    msum_t s, s2;
    ms_init(&s), ms_init(&s2);
    double mn = AT(x, idx, 0), mx = mn;
    for (Py_ssize_t i = 0; i < m; i++) {
        double v = AT(x, idx, i);
        ms_add(&s, v);
        double sq = v * v;
        ms_add(&s2, sq);
        if (v < mn) mn = v;
        if (v > mx) mx = v;
    }
    double sum = ms_result(&s), sum2 = ms_result(&s2);
    double m2 = sum2 - sum * sum / (double)m;
    if (m2 < 1e-6 * sum2) { /* cancellation: shift by the first value */
        double x0 = AT(x, idx, 0);
        msum_t d, d2;
        ms_init(&d), ms_init(&d2);
        for (Py_ssize_t i = 0; i < m; i++) {
            double dv = AT(x, idx, i) - x0;
            ms_add(&d, dv);
            double dq = dv * dv;
            ms_add(&d2, dq);
        }
        double s1 = ms_result(&d);
        m2 = ms_result(&d2) - s1 * s1 / (double)m;
        R->overflow |= d.bad | d2.bad;
    }
    m2 = m2 > 0.0 ? m2 : 0.0;
    double wsum = 0.0, wxsum = 0.0;
    Py_ssize_t wn = 0;
    if (w) {
        msum_t a, b;
        ms_init(&a), ms_init(&b);
        for (Py_ssize_t i = 0; i < m; i++) {
            double wi = AT(w, idx, i);
            ms_add(&a, wi);
            double wx = wi * AT(x, idx, i);
            ms_add(&b, wx);
        }
        wsum = ms_result(&a), wxsum = ms_result(&b), wn = m;
        R->overflow |= a.bad | b.bad;
    }
    R->overflow |= s.bad | s2.bad;
    Py_ssize_t t0 = m > TAIL ? m - TAIL : 0;
    PyObject *tail = PyList_New(m - t0);
    if (!tail) return NULL;
    for (Py_ssize_t i = t0; i < m; i++) {
        PyObject *f = PyFloat_FromDouble(AT(x, idx, i));
        if (!f) {
            Py_DECREF(tail);
            return NULL;
        }
        PyList_SET_ITEM(tail, i - t0, f);
    }
    PyObject *small;
    if (m <= SMALL) {
        small = PyList_New(m);
        for (Py_ssize_t i = 0; small && i < m; i++) {
            PyObject *o = w ? PyFloat_FromDouble(AT(w, idx, i)) : (Py_INCREF(Py_None), Py_None);
            if (!o) {
                Py_CLEAR(small);
                break;
            }
            PyList_SET_ITEM(small, i, o);
        }
    } else {
        Py_INCREF(Py_None);
        small = Py_None;
    }
    PyObject *prefix = prefix_of(R, x, idx, m);
    if (!small || !prefix) {
        Py_DECREF(tail);
        Py_XDECREF(small);
        Py_XDECREF(prefix);
        return NULL;
    }
    return Py_BuildValue("(nddddddddnNNN)", m, sum, m2, mn, mx, AT(x, idx, 0), AT(x, idx, m - 1), wsum, wxsum, wn,
                         tail, prefix, small);
}

/* RatioChunk.of(nums, dens) over idx */
static PyObject *ratio_chunk(run_t *R, const double *a, const double *d, const int32_t *idx, Py_ssize_t m) {
    double num = fsum_of(R, a, idx, m), den = fsum_of(R, d, idx, m);
    PyObject *pa = prefix_of(R, a, idx, m), *pd = pa ? prefix_of(R, d, idx, m) : NULL;
    if (!pa || !pd) {
        Py_XDECREF(pa);
        return NULL;
    }
    return Py_BuildValue("(nddNN)", m, num, den, pa, pd);
}

static int positive(run_t *R, int c) { return R->present[c] && R->mn[c] > 0.0; }

/* metrics.prepare over the records idx[0..m) (m > 0) */
static PyObject *prepared(run_t *R, const int32_t *idx, Py_ssize_t m) {
    const double *const *c = R->c;
    int sg = R->sglang;
    const double *w_len = sg ? c[RUN] : c[ND], *w_rate = sg ? c[RUN] : c[DR];
    struct {
        int col;
        const double *w;
    } spec[6] = {{AL, w_len}, {AR, w_rate}, {TP, NULL}, {RUN, NULL}, {ALD, c[ND]}, {ARD, c[ND]}};
    PyObject *chunks = PyList_New(6);
    if (!chunks) return NULL;
    for (int s = 0; s < 6; s++) {
        PyObject *o;
        if (!R->present[spec[s].col]) {
            Py_INCREF(Py_None);
            o = Py_None;
        } else {
            o = column_chunk(R, c[spec[s].col], spec[s].w, idx, m);
            if (!o) {
                Py_DECREF(chunks);
                return NULL;
            }
        }
        PyList_SET_ITEM(chunks, s, o);
    }
    PyObject *pl = Py_None, *pr = Py_None;
    Py_INCREF(Py_None), Py_INCREF(Py_None);
    double accepted = 0.0, drafted = 0.0;
    if (positive(R, ND) && positive(R, DR) && R->present[ACC]) {
        Py_DECREF(pl), Py_DECREF(pr);
        pl = ratio_chunk(R, c[ACC], c[ND], idx, m);
        pr = pl ? ratio_chunk(R, c[ACC], c[DR], idx, m) : NULL;
        accepted = fsum_of(R, c[ACC], idx, m);
        drafted = fsum_of(R, c[DR], idx, m);
        if (!pl || !pr) {
            Py_XDECREF(pl);
            Py_DECREF(chunks);
            return NULL;
        }
    }
    PyObject *positions = Py_None;
    Py_INCREF(Py_None);
    if (R->k > 0) {
        PyObject *sums = PyList_New(R->k);
        for (int j = 0; sums && j < R->k; j++) {
            msum_t s;
            ms_init(&s);
            for (Py_ssize_t i = 0; i < m; i++) {
                Py_ssize_t r = idx ? idx[i] : i;
                double v = R->pp[r * R->k + j] * c[ND][r];
                ms_add(&s, v);
            }
            R->overflow |= s.bad;
            PyObject *f = PyFloat_FromDouble(ms_result(&s));
            if (!f) {
                Py_CLEAR(sums);
                break;
            }
            PyList_SET_ITEM(sums, j, f);
        }
        Py_DECREF(positions);
        positions = sums ? Py_BuildValue("(Nd)", sums, fsum_of(R, c[ND], idx, m)) : NULL;
        if (!positions) {
            Py_DECREF(chunks), Py_DECREF(pl), Py_DECREF(pr);
            return NULL;
        }
    }
    PyObject *first, *last;
    if (R->present[TS]) {
        first = PyFloat_FromDouble(AT(c[TS], idx, 0));
        last = PyFloat_FromDouble(AT(c[TS], idx, m - 1));
    } else {
        Py_INCREF(Py_None), Py_INCREF(Py_None);
        first = last = Py_None;
    }
    return Py_BuildValue("(nNNNddNNN)", m, chunks, pl, pr, accepted, drafted, positions, first, last);
}

/* load.EDGES and bin_of */
static double edges[NBINS];
static int n_edges = 0;

static void init_edges(void) {
    double e[] = {0.0, 1.0, 2.0, 3.0};
    n_edges = 0;
    for (int i = 0; i < 4; i++) edges[n_edges++] = e[i];
    for (long x = 4; x < (1L << 24); x *= 2) {
        edges[n_edges++] = (double)x;
        edges[n_edges++] = (double)(x + x / 2);
    }
}

static int bin_of(double r) {
    if (!(r >= 0.0)) return -1;
    int lo = 0, hi = n_edges; /* bisect_right */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (r < edges[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo - 1;
}

/* load.bin_chunks */
static PyObject *bins_of(run_t *R) {
    PyObject *out = PyList_New(0);
    if (!out || !R->present[RUN]) return out;
    Py_ssize_t n = R->n, count[NBINS] = {0}, start[NBINS];
    int32_t *order = (int32_t *)malloc((size_t)n * sizeof(int32_t));
    unsigned char *b = (unsigned char *)malloc((size_t)n);
    if (!order || !b) {
        free(order), free(b);
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int x = bin_of(R->c[RUN][i]); /* running_req >= 0 (checked): a bin */
        b[i] = (unsigned char)x;
        count[x]++;
    }
    Py_ssize_t at = 0;
    for (int j = 0; j < n_edges; j++) start[j] = at, at += count[j];
    for (Py_ssize_t i = 0; i < n; i++) order[start[b[i]]++] = (int32_t)i; /* stable */
    int counts = R->present[ACC];
    at = 0;
    for (int j = 0; j < n_edges && out; j++) {
        if (!count[j]) continue;
        const int32_t *idx = order + at;
        Py_ssize_t m = count[j];
        at += m;
        PyObject *lines = R->present[AL] ? column_chunk(R, R->c[AL], NULL, idx, m) : (Py_INCREF(Py_None), Py_None);
        PyObject *pooled = counts && lines ? ratio_chunk(R, R->c[ACC], R->c[ND], idx, m) : (Py_INCREF(Py_None), Py_None);
        PyObject *item = lines && pooled ? Py_BuildValue("(iNN)", j, lines, pooled) : NULL;
        if (!item) {
            Py_XDECREF(lines), Py_XDECREF(pooled);
            Py_CLEAR(out);
            break;
        }
        if (lines == Py_None && pooled == Py_None) {
            Py_DECREF(item);
            continue;
        }
        if (PyList_Append(out, item) < 0) Py_CLEAR(out);
        Py_DECREF(item);
    }
    free(order), free(b);
    return out;
}

/* clean(cols, None) finds nothing to refuse, and prepare's fast branches apply: 1; else 0 */
static int common_form(run_t *R) {
    Py_ssize_t n = R->n;
    for (int c = 0; c < NC; c++) {
        const double *x = R->c[c];
        Py_ssize_t nan = 0;
        double lo = LO[c] - EPS, hi = HI[c] + EPS, mn = INFINITY, mx = -INFINITY;
        if (c == AL && R->k > 0) hi = (double)R->k + 1.0 + EPS;
        int bad = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            double v = x[i];
            if (v != v) {
                nan++;
                continue;
            }
            if (!(v >= lo && v <= hi)) bad = 1; /* inf too */
            if (v < mn) mn = v;
            if (v > mx) mx = v;
        }
        if (nan == n) {
            R->present[c] = 0;
            continue;
        }
        if (nan || bad) return 0;
        R->present[c] = 1;
        /* min() / max(): the first of equal values (0.0 and -0.0) */
        mn = mx = x[0];
        for (Py_ssize_t i = 1; i < n; i++) {
            if (x[i] < mn) mn = x[i];
            if (x[i] > mx) mx = x[i];
        }
        R->mn[c] = mn, R->mx[c] = mx;
    }
    if (R->present[ACC] && R->present[DR])
        for (Py_ssize_t i = 0; i < n; i++)
            if (R->c[ACC][i] > R->c[DR][i] + EPS) return 0;
    /* the weights of the series printed: positive (the fast branch of _chunk) */
    if (R->sglang) {
        if ((R->present[AL] || R->present[AR]) && !positive(R, RUN)) return 0;
        if (R->present[ALD] || R->present[ARD]) return 0; /* SGLang derives none */
    } else {
        if ((R->present[AL] || R->present[ALD] || R->present[ARD]) && !positive(R, ND)) return 0;
        if (R->present[AR] && !positive(R, DR)) return 0;
    }
    /* pooled: every count there and positive, or no accepted count at all */
    if (R->present[ACC] && !(positive(R, ND) && positive(R, DR))) return 0;
    if (R->k > 0) {
        if (R->k > MAX_POSITIONS || !positive(R, ND)) return 0;
        for (Py_ssize_t i = 0; i < n * R->k; i++)
            if (!(R->pp[i] >= 0.0 && R->pp[i] <= 1.0)) return 0;
    }
    return 1;
}

static PyObject *precompute(PyObject *self, PyObject *args) {
    int sglang, k, n_groups;
    Py_ssize_t n;
    PyObject *cols, *pp_obj, *rank_obj;
    if (!PyArg_ParseTuple(args, "pOnOiOi", &sglang, &cols, &n, &pp_obj, &k, &rank_obj, &n_groups)) return NULL;
    if (!PyTuple_Check(cols) || PyTuple_GET_SIZE(cols) != NC) {
        PyErr_SetString(PyExc_TypeError, "cols: a tuple of 10 buffers");
        return NULL;
    }
    if (n <= 0 || n > INT32_MAX) Py_RETURN_NONE;
    Py_buffer views[NC + 2];
    int got = 0, ok = 1;
    run_t R;
    memset(&R, 0, sizeof R);
    R.n = n, R.k = k, R.sglang = sglang;
    for (; got < NC; got++) {
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(cols, got), &views[got], PyBUF_SIMPLE) < 0) {
            ok = 0;
            break;
        }
        if (views[got].len != n * (Py_ssize_t)sizeof(double)) {
            got++;
            PyErr_SetString(PyExc_ValueError, "a column is not n doubles");
            ok = 0;
            break;
        }
        R.c[got] = (const double *)views[got].buf;
    }
    Py_buffer ppv = {0}, rkv = {0};
    int have_pp = 0, have_rk = 0;
    if (ok && pp_obj != Py_None) {
        if (PyObject_GetBuffer(pp_obj, &ppv, PyBUF_SIMPLE) < 0) ok = 0;
        else {
            have_pp = 1;
            if (k <= 0 || ppv.len != n * k * (Py_ssize_t)sizeof(double)) {
                PyErr_SetString(PyExc_ValueError, "pp is not n * k doubles");
                ok = 0;
            }
            R.pp = (const double *)ppv.buf;
        }
    } else if (pp_obj == Py_None) {
        R.k = 0;
    }
    if (ok && rank_obj != Py_None) {
        if (PyObject_GetBuffer(rank_obj, &rkv, PyBUF_SIMPLE) < 0) ok = 0;
        else {
            have_rk = 1;
            if (rkv.len != n || n_groups < 1 || n_groups > 255) {
                PyErr_SetString(PyExc_ValueError, "rank_idx is not n bytes of n_groups groups");
                ok = 0;
            }
        }
    }
    PyObject *result = NULL;
    int common = 0;
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        common = common_form(&R);
        Py_END_ALLOW_THREADS
    }
    if (ok && !common) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else if (ok) {
        PyObject *full = PyList_New(NC);
        for (int c = 0; full && c < NC; c++) {
            PyObject *o = R.present[c] ? Py_BuildValue("(dd)", R.mn[c], R.mx[c]) : (Py_INCREF(Py_None), Py_None);
            if (!o) Py_CLEAR(full);
            else PyList_SET_ITEM(full, c, o);
        }
        PyObject *main = full ? prepared(&R, NULL, n) : NULL;
        PyObject *by_rank = NULL;
        if (main && have_rk) {
            const unsigned char *g = (const unsigned char *)rkv.buf;
            int32_t *idx = (int32_t *)malloc((size_t)n * sizeof(int32_t));
            by_rank = idx ? PyList_New(n_groups) : PyErr_NoMemory();
            for (int j = 0; by_rank && j < n_groups; j++) {
                Py_ssize_t m = 0;
                for (Py_ssize_t i = 0; i < n; i++)
                    if (g[i] == j) idx[m++] = (int32_t)i;
                PyObject *p = m ? prepared(&R, idx, m) : (Py_INCREF(Py_None), Py_None);
                if (!p) Py_CLEAR(by_rank);
                else PyList_SET_ITEM(by_rank, j, p);
            }
            free(idx);
        } else if (main) {
            Py_INCREF(Py_None);
            by_rank = Py_None;
        }
        PyObject *bins = by_rank ? bins_of(&R) : NULL;
        if (full && main && by_rank && bins) {
            if (R.overflow) {
                Py_DECREF(full), Py_DECREF(main), Py_DECREF(by_rank), Py_DECREF(bins);
                Py_INCREF(Py_None);
                result = Py_None;
            } else {
                result = Py_BuildValue("(NNNN)", full, main, by_rank, bins);
            }
        } else {
            Py_XDECREF(full), Py_XDECREF(main), Py_XDECREF(by_rank), Py_XDECREF(bins);
        }
    }
    for (int i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    if (have_pp) PyBuffer_Release(&ppv);
    if (have_rk) PyBuffer_Release(&rkv);
    return result;
}

static PyMethodDef methods[] = {
    {"precompute", precompute, METH_VARARGS, "Reduce a run in the common form (see the module text), or None."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_reduce", NULL, -1, methods};

PyMODINIT_FUNC PyInit__reduce(void) {
    init_edges();
    return PyModule_Create(&module);
}
