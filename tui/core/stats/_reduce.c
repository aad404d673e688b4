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

/* ---- phase 1, without the GIL: every number, into plain structs ---- */
typedef struct { /* a ColumnChunk */
    Py_ssize_t m, wn;
    double sum, m2, mn, mx, wsum, wxsum;
    const double *x, *w;
    const int32_t *idx;
    double *prefix; /* m + 1 running sums (malloc) */
} cc_t;

typedef struct { /* a RatioChunk */
    Py_ssize_t m;
    double num, den;
    double *pa, *pd;
} rcs_t;

typedef struct { /* a Prepared */
    Py_ssize_t m;
    const int32_t *idx;
    int has[6];
    cc_t cc[6];
    int pooled;
    rcs_t pl, pr;
    double accepted, drafted;
    double *pos, pos_w; /* k sums (malloc), or NULL */
    int ts;
    double first, last;
} prep_t;

static double *prefix_of(const double *x, const int32_t *idx, Py_ssize_t m) {
    double *p = (double *)malloc((size_t)(m + 1) * sizeof(double));
    if (!p) return NULL;
    double s = 0.0;
    p[0] = 0.0;
    for (Py_ssize_t i = 0; i < m; i++) {
        s = s + AT(x, idx, i);
        p[i + 1] = s;
    }
    return p;
}

static double fsum_of(run_t *R, const double *x, const int32_t *idx, Py_ssize_t m) {
    msum_t s;
    ms_init(&s);
    for (Py_ssize_t i = 0; i < m; i++) ms_add(&s, AT(x, idx, i));
    R->overflow |= s.bad;
    return ms_result(&s);
}

/* ColumnChunk.of(xs, ws) over x[idx[0..m)]; w NULL: unweighted; m > 0. 0: out of memory */
static int column_chunk(run_t *R, cc_t *c, const double *x, const double *w, const int32_t *idx, Py_ssize_t m) {
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
    c->m2 = m2 > 0.0 ? m2 : 0.0;
    c->wsum = c->wxsum = 0.0;
    c->wn = 0;
    if (w) {
        msum_t a, b;
        ms_init(&a), ms_init(&b);
        for (Py_ssize_t i = 0; i < m; i++) {
            double wi = AT(w, idx, i);
            ms_add(&a, wi);
            double wx = wi * AT(x, idx, i);
            ms_add(&b, wx);
        }
        c->wsum = ms_result(&a), c->wxsum = ms_result(&b), c->wn = m;
        R->overflow |= a.bad | b.bad;
    }
    R->overflow |= s.bad | s2.bad;
    c->m = m, c->sum = sum, c->mn = mn, c->mx = mx, c->x = x, c->w = w, c->idx = idx;
    c->prefix = prefix_of(x, idx, m);
    return c->prefix != NULL;
}

/* RatioChunk.of(nums, dens) over idx. 0: out of memory */
static int ratio_chunk(run_t *R, rcs_t *r, const double *a, const double *d, const int32_t *idx, Py_ssize_t m) {
    r->m = m;
    r->num = fsum_of(R, a, idx, m), r->den = fsum_of(R, d, idx, m);
    r->pa = prefix_of(a, idx, m);
    r->pd = prefix_of(d, idx, m);
    return r->pa && r->pd;
}

static int positive(run_t *R, int c) { return R->present[c] && R->mn[c] > 0.0; }

/* metrics.prepare over the records idx[0..m) (m > 0). 0: out of memory */
static int prepare(run_t *R, prep_t *P, const int32_t *idx, Py_ssize_t m) {
    const double *const *c = R->c;
    int sg = R->sglang;
    const double *w_len = sg ? c[RUN] : c[ND], *w_rate = sg ? c[RUN] : c[DR];
    const int col[6] = {AL, AR, TP, RUN, ALD, ARD};
    const double *wt[6] = {w_len, w_rate, NULL, NULL, c[ND], c[ND]};
    P->m = m, P->idx = idx;
    for (int s = 0; s < 6; s++) {
        P->has[s] = R->present[col[s]];
        if (P->has[s] && !column_chunk(R, &P->cc[s], c[col[s]], wt[s], idx, m)) return 0;
    }
    P->pooled = positive(R, ND) && positive(R, DR) && R->present[ACC];
    P->accepted = P->drafted = 0.0;
    if (P->pooled) {
        if (!ratio_chunk(R, &P->pl, c[ACC], c[ND], idx, m) || !ratio_chunk(R, &P->pr, c[ACC], c[DR], idx, m))
            return 0;
        P->accepted = fsum_of(R, c[ACC], idx, m);
        P->drafted = fsum_of(R, c[DR], idx, m);
    }
    if (R->k > 0) {
        P->pos = (double *)malloc((size_t)R->k * sizeof(double));
        if (!P->pos) return 0;
        for (int j = 0; j < R->k; j++) {
            msum_t s;
            ms_init(&s);
            for (Py_ssize_t i = 0; i < m; i++) {
                Py_ssize_t r = idx ? idx[i] : i;
                double v = R->pp[r * R->k + j] * c[ND][r];
                ms_add(&s, v);
            }
            R->overflow |= s.bad;
            P->pos[j] = ms_result(&s);
        }
        P->pos_w = fsum_of(R, c[ND], idx, m);
    }
    P->ts = R->present[TS];
    if (P->ts) P->first = AT(c[TS], idx, 0), P->last = AT(c[TS], idx, m - 1);
    return 1;
}

static void free_cc(cc_t *c) { free(c->prefix), c->prefix = NULL; }
static void free_rc(rcs_t *r) { free(r->pa), free(r->pd), r->pa = r->pd = NULL; }
static void free_prep(prep_t *P) {
    for (int s = 0; s < 6; s++) free_cc(&P->cc[s]);
    free_rc(&P->pl), free_rc(&P->pr);
    free(P->pos), P->pos = NULL;
}

/* ---- phase 2, with the GIL: the objects ---- */
static PyObject *doubles(const double *v, Py_ssize_t m) {
    return PyBytes_FromStringAndSize((const char *)v, m * (Py_ssize_t)sizeof(double));
}

static PyObject *build_cc(const cc_t *c) {
    Py_ssize_t m = c->m, t0 = m > TAIL ? m - TAIL : 0;
    const double *x = c->x, *w = c->w;
    const int32_t *idx = c->idx;
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
    PyObject *prefix = doubles(c->prefix, m + 1);
    if (!small || !prefix) {
        Py_DECREF(tail);
        Py_XDECREF(small);
        Py_XDECREF(prefix);
        return NULL;
    }
    return Py_BuildValue("(nddddddddnNNN)", m, c->sum, c->m2, c->mn, c->mx, AT(x, idx, 0), AT(x, idx, m - 1), c->wsum,
                         c->wxsum, c->wn, tail, prefix, small);
}

static PyObject *build_rc(const rcs_t *r) {
    PyObject *pa = doubles(r->pa, r->m + 1), *pd = pa ? doubles(r->pd, r->m + 1) : NULL;
    if (!pa || !pd) {
        Py_XDECREF(pa);
        return NULL;
    }
    return Py_BuildValue("(nddNN)", r->m, r->num, r->den, pa, pd);
}

static PyObject *build_prep(const run_t *R, const prep_t *P) {
    PyObject *chunks = PyList_New(6);
    if (!chunks) return NULL;
    for (int s = 0; s < 6; s++) {
        PyObject *o = P->has[s] ? build_cc(&P->cc[s]) : (Py_INCREF(Py_None), Py_None);
        if (!o) {
            Py_DECREF(chunks);
            return NULL;
        }
        PyList_SET_ITEM(chunks, s, o);
    }
    PyObject *pl = P->pooled ? build_rc(&P->pl) : (Py_INCREF(Py_None), Py_None);
    PyObject *pr = pl && P->pooled ? build_rc(&P->pr) : (Py_INCREF(Py_None), Py_None);
    PyObject *positions = Py_None;
    Py_INCREF(Py_None);
    if (pl && pr && R->k > 0) {
        PyObject *sums = PyList_New(R->k);
        for (int j = 0; sums && j < R->k; j++) {
            PyObject *f = PyFloat_FromDouble(P->pos[j]);
            if (!f) Py_CLEAR(sums);
            else PyList_SET_ITEM(sums, j, f);
        }
        Py_DECREF(positions);
        positions = sums ? Py_BuildValue("(Nd)", sums, P->pos_w) : NULL;
    }
    if (!pl || !pr || !positions) {
        Py_DECREF(chunks), Py_XDECREF(pl), Py_XDECREF(pr), Py_XDECREF(positions);
        return NULL;
    }
    PyObject *first, *last;
    if (P->ts) {
        first = PyFloat_FromDouble(P->first);
        last = PyFloat_FromDouble(P->last);
    } else {
        Py_INCREF(Py_None), Py_INCREF(Py_None);
        first = last = Py_None;
    }
    return Py_BuildValue("(nNNNddNNN)", P->m, chunks, pl, pr, P->accepted, P->drafted, positions, first, last);
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
typedef struct {
    int bin, lines, pooled;
    cc_t cc;
    rcs_t rc;
} bin_t;

typedef struct {
    int n;
    bin_t b[NBINS];
    int32_t *order;
} bins_t;

static int bins_compute(run_t *R, bins_t *B) {
    B->n = 0;
    if (!R->present[RUN]) return 1;
    Py_ssize_t n = R->n, count[NBINS] = {0}, start[NBINS];
    B->order = (int32_t *)malloc((size_t)n * sizeof(int32_t));
    unsigned char *b = (unsigned char *)malloc((size_t)n);
    if (!B->order || !b) {
        free(b);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int x = bin_of(R->c[RUN][i]); /* running_req >= 0 (checked): a bin */
        b[i] = (unsigned char)x;
        count[x]++;
    }
    Py_ssize_t at = 0;
    for (int j = 0; j < n_edges; j++) start[j] = at, at += count[j];
    for (Py_ssize_t i = 0; i < n; i++) B->order[start[b[i]]++] = (int32_t)i; /* stable */
    free(b);
    at = 0;
    for (int j = 0; j < n_edges; j++) {
        if (!count[j]) continue;
        const int32_t *idx = B->order + at;
        Py_ssize_t m = count[j];
        at += m;
        bin_t *e = &B->b[B->n];
        memset(e, 0, sizeof *e);
        e->bin = j;
        e->lines = R->present[AL];
        e->pooled = R->present[ACC];
        if (!e->lines && !e->pooled) continue;
        B->n++;
        if (e->lines && !column_chunk(R, &e->cc, R->c[AL], NULL, idx, m)) return 0;
        if (e->pooled && !ratio_chunk(R, &e->rc, R->c[ACC], R->c[ND], idx, m)) return 0;
    }
    return 1;
}

static void bins_free(bins_t *B) {
    for (int i = 0; i < B->n; i++) free_cc(&B->b[i].cc), free_rc(&B->b[i].rc);
    free(B->order), B->order = NULL;
}

static PyObject *bins_build(const bins_t *B) {
    PyObject *out = PyList_New(B->n);
    for (int i = 0; out && i < B->n; i++) {
        const bin_t *e = &B->b[i];
        PyObject *lines = e->lines ? build_cc(&e->cc) : (Py_INCREF(Py_None), Py_None);
        PyObject *pooled = lines && e->pooled ? build_rc(&e->rc) : (Py_INCREF(Py_None), Py_None);
        PyObject *item = lines && pooled ? Py_BuildValue("(iNN)", e->bin, lines, pooled) : NULL;
        if (!item) {
            Py_XDECREF(lines), Py_XDECREF(pooled);
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, item);
    }
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
    int common = 0, mem = 1;
    prep_t main_p, *groups = NULL;
    bins_t bins;
    int32_t *gidx = NULL;
    memset(&main_p, 0, sizeof main_p);
    memset(&bins, 0, sizeof bins);
    if (ok && have_rk) {
        groups = (prep_t *)calloc((size_t)n_groups, sizeof(prep_t));
        gidx = (int32_t *)malloc((size_t)n * sizeof(int32_t));
        if (!groups || !gidx) mem = 0;
    }
    if (ok && mem) {
        Py_BEGIN_ALLOW_THREADS
        common = common_form(&R);
        if (common) mem = prepare(&R, &main_p, NULL, n);
        if (common && mem && have_rk) { /* each group's records, in order */
            const unsigned char *g = (const unsigned char *)rkv.buf;
            Py_ssize_t count[256] = {0}, start[256];
            for (Py_ssize_t i = 0; i < n; i++) count[g[i]]++;
            Py_ssize_t at = 0;
            for (int j = 0; j < 256; j++) start[j] = at, at += count[j];
            for (Py_ssize_t i = 0; i < n; i++) gidx[start[g[i]]++] = (int32_t)i;
            at = 0;
            for (int j = 0; mem && j < n_groups; j++) {
                if (count[j]) mem = prepare(&R, &groups[j], gidx + at, count[j]);
                at += count[j];
            }
        }
        if (common && mem) mem = bins_compute(&R, &bins);
        Py_END_ALLOW_THREADS
    }
    if (ok && !mem) {
        PyErr_NoMemory();
    } else if (ok && (!common || R.overflow)) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else if (ok) {
        PyObject *full = PyList_New(NC);
        for (int c = 0; full && c < NC; c++) {
            PyObject *o = R.present[c] ? Py_BuildValue("(dd)", R.mn[c], R.mx[c]) : (Py_INCREF(Py_None), Py_None);
            if (!o) Py_CLEAR(full);
            else PyList_SET_ITEM(full, c, o);
        }
        PyObject *main = full ? build_prep(&R, &main_p) : NULL;
        PyObject *by_rank = NULL;
        if (main && have_rk) {
            by_rank = PyList_New(n_groups);
            for (int j = 0; by_rank && j < n_groups; j++) {
                PyObject *p = groups[j].m ? build_prep(&R, &groups[j]) : (Py_INCREF(Py_None), Py_None);
                if (!p) Py_CLEAR(by_rank);
                else PyList_SET_ITEM(by_rank, j, p);
            }
        } else if (main) {
            Py_INCREF(Py_None);
            by_rank = Py_None;
        }
        PyObject *bl = by_rank ? bins_build(&bins) : NULL;
        if (full && main && by_rank && bl) {
            result = Py_BuildValue("(NNNN)", full, main, by_rank, bl);
        } else {
            Py_XDECREF(full), Py_XDECREF(main), Py_XDECREF(by_rank), Py_XDECREF(bl);
        }
    }
    free_prep(&main_p);
    for (int j = 0; groups && j < n_groups; j++) free_prep(&groups[j]);
    free(groups), free(gidx);
    bins_free(&bins);
    for (int i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    if (have_pp) PyBuffer_Release(&ppv);
    if (have_rk) PyBuffer_Release(&rkv);
    return result;
}

/* steps(prefix, i, last, size) -> bytes of doubles: prefix[j + size] - prefix[j] for j = i,
 * i + size, ... < last (estimate.Batches: the sums of whole batches, from running sums). */
static PyObject *steps(PyObject *self, PyObject *args) {
    Py_buffer v;
    Py_ssize_t i, last, size;
    if (!PyArg_ParseTuple(args, "y*nnn", &v, &i, &last, &size)) return NULL;
    Py_ssize_t n = v.len / (Py_ssize_t)sizeof(double);
    if (size < 1 || i < 0 || last < i || last > n - 1 || (last - i) % size) {
        PyBuffer_Release(&v);
        PyErr_SetString(PyExc_ValueError, "steps: bad range");
        return NULL;
    }
    Py_ssize_t k = (last - i) / size;
    PyObject *out = PyBytes_FromStringAndSize(NULL, k * (Py_ssize_t)sizeof(double));
    if (out) {
        const double *p = (const double *)v.buf;
        double *o = (double *)PyBytes_AS_STRING(out);
        for (Py_ssize_t j = 0; j < k; j++) o[j] = p[i + (j + 1) * size] - p[i + j * size];
    }
    PyBuffer_Release(&v);
    return out;
}

/* pairs(sums) -> bytes of doubles: sums[0] + sums[1], sums[2] + sums[3], ... (an odd last one
 * dropped, as zip does): estimate.Batches halving its batches. */
static PyObject *pairs(PyObject *self, PyObject *args) {
    Py_buffer v;
    if (!PyArg_ParseTuple(args, "y*", &v)) return NULL;
    Py_ssize_t k = v.len / (Py_ssize_t)sizeof(double) / 2;
    PyObject *out = PyBytes_FromStringAndSize(NULL, k * (Py_ssize_t)sizeof(double));
    if (out) {
        const double *p = (const double *)v.buf;
        double *o = (double *)PyBytes_AS_STRING(out);
        for (Py_ssize_t j = 0; j < k; j++) o[j] = p[2 * j] + p[2 * j + 1];
    }
    PyBuffer_Release(&v);
    return out;
}

static PyMethodDef methods[] = {
    {"precompute", precompute, METH_VARARGS, "Reduce a run in the common form (see the module text), or None."},
    {"steps", steps, METH_VARARGS, "Sums of whole batches from running sums (estimate.Batches)."},
    {"pairs", pairs, METH_VARARGS, "Neighbouring batch sums added (estimate.Batches halving)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_reduce", NULL, -1, methods};

PyMODINIT_FUNC PyInit__reduce(void) {
    init_edges();
    return PyModule_Create(&module);
}
