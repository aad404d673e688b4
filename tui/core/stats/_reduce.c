/* Optional native form of tui/core/stats/precompute.py's reduction (the Python code is the
 * reference; tests/unit/test_reduce_native.py checks that both give identical results, bit for bit,
 * on generated and real runs).
 *
 * precompute(sglang, cols, n, pp, k, rank_idx, n_groups) reduces a run of records that is in the
 * common form, and returns None for anything else (the caller then runs the Python code):
 *   cols      one buffer of n doubles per checked column, in the order given to layout() (the
 *             quantity registry's: checks.ranges()), among them accept_len, accept_rate,
 *             accept_len_derived, accept_rate_derived, accepted, drafted, num_drafts,
 *             running_req, throughput, timestamp, found by name;
 *   pp, k     the per-position rates, n * k doubles (None and 0: the run has none);
 *   rank_idx  None, or n bytes: each record's rank group (groups in order of first appearance).
 * The common form: each column printed on every record or on none; every value finite and
 * within its bounds; accepted <= drafted; the weights (drafts, drafted tokens, #running-req)
 * positive; per-position rates within [0, 1] and k <= 32. Nothing is refused then, so the
 * result is what clean() + prepare() + bin_chunks() give:
 *   (full, prepared, by_rank, bins)
 *   full      one item per column: None (not printed) or (min, max)
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

/* The column layout, given by the Python side at load time (layout(), from the quantity
 * registry: tui/core/model/quantities.py): how many checked columns a run brings, each one's
 * bounds, and where the columns this reduction uses by meaning are. No positional list here. */
#define MAXC 32
static int NC = 0; /* 0: layout() not called yet */
static double LO[MAXC], HI[MAXC];
static int AL, AR, ALD, ARD, ACC, DR, ND, RUN, TP, TS;
#define EPS 1e-9
#define TAIL 400
#define SMALL 16
#define MAX_POSITIONS 32
#define NBINS 64

#include "_reduce_compute.h"
#include "_reduce_requests.h"

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
            PyObject *o = w ? PyFloat_FromDouble(AT(w, idx, i))
                          : c->wzero ? PyFloat_FromDouble(0.0)
                                     : (Py_INCREF(Py_None), Py_None);
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

static PyObject *bins_build(const bins_t *B) {
    PyObject *out = PyList_New(B->n);
    for (int i = 0; out && i < B->n; i++) {
        const bin_t *e = &B->b[i];
        PyObject *lines = e->lines ? build_cc(&e->cc) : (Py_INCREF(Py_None), Py_None);
        PyObject *pooled = lines && e->pooled ? build_rc(&e->rc) : (Py_INCREF(Py_None), Py_None);
        /* the records' places in the run (int32): load.TimeBins puts the bin's sums in time */
        PyObject *pos = lines && pooled ? PyBytes_FromStringAndSize((const char *)e->idx, e->m * (Py_ssize_t)sizeof(int32_t)) : NULL;
        PyObject *item = pos ? Py_BuildValue("(iNNN)", e->bin, lines, pooled, pos) : NULL;
        if (!item) {
            Py_XDECREF(lines), Py_XDECREF(pooled), Py_XDECREF(pos);
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
    /* the weights of the series printed: positive (the fast branch of _chunk), or printed on no
     * record (a family whose lines print no drafts count: every weight 0, as _present makes them) */
    if (R->sglang) {
        if ((R->present[AL] || R->present[AR]) && !positive(R, RUN)) return 0;
        if (R->present[ALD] || R->present[ARD]) return 0; /* SGLang derives none */
    } else {
        if ((R->present[ALD] || R->present[ARD]) && !positive(R, ND)) return 0;
        if (R->present[ALD] && !R->present[ACC]) return 0; /* prepare's pooled len from the derived values */
        if (R->present[AL] && R->present[ND] && !positive(R, ND)) return 0;
        if (R->present[AR] && R->present[DR] && !positive(R, DR)) return 0;
    }
    /* pooled: each denominator (drafts, drafted tokens) there and positive, or printed on no
     * record (its ratio then has no pair) */
    if (R->present[ACC] && ((R->present[ND] && !positive(R, ND)) || (R->present[DR] && !positive(R, DR)))) return 0;
    if (R->k > 0) {
        if (R->k > MAX_POSITIONS || !positive(R, ND)) return 0;
        for (Py_ssize_t i = 0; i < n * R->k; i++)
            if (!(R->pp[i] >= 0.0 && R->pp[i] <= 1.0)) return 0;
    }
    return 1;
}

static PyObject *precompute(PyObject *Py_UNUSED(self), PyObject *args) {
    int sglang, k, n_groups;
    Py_ssize_t n;
    PyObject *cols, *pp_obj, *rank_obj;
    if (!PyArg_ParseTuple(args, "pOnOiOi", &sglang, &cols, &n, &pp_obj, &k, &rank_obj, &n_groups)) return NULL;
    if (NC == 0) {
        PyErr_SetString(PyExc_RuntimeError, "precompute: layout() not called");
        return NULL;
    }
    if (!PyTuple_Check(cols) || PyTuple_GET_SIZE(cols) != NC) {
        PyErr_Format(PyExc_TypeError, "cols: a tuple of %d buffers (the layout)", NC);
        return NULL;
    }
    if (n <= 0 || n > INT32_MAX) Py_RETURN_NONE;
    Py_buffer views[MAXC + 2];
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
static PyObject *steps(PyObject *Py_UNUSED(self), PyObject *args) {
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
static PyObject *pairs(PyObject *Py_UNUSED(self), PyObject *args) {
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

/* layout(names, lo, hi): the checked columns a run brings to precompute(), in that order (their
 * names, and each one's valid range); the columns the reduction uses are found by name. */
static PyObject *layout(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *names, *lo, *hi;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyTuple_Type, &names, &PyTuple_Type, &lo, &PyTuple_Type, &hi)) return NULL;
    Py_ssize_t m = PyTuple_GET_SIZE(names);
    if (m < 1 || m > MAXC || PyTuple_GET_SIZE(lo) != m || PyTuple_GET_SIZE(hi) != m) {
        PyErr_Format(PyExc_ValueError, "layout: 1 to %d names, with as many bounds", MAXC);
        return NULL;
    }
    static const char *const role_names[] = {"accept_len", "accept_rate", "accept_len_derived", "accept_rate_derived",
                                             "accepted",   "drafted",     "num_drafts",         "running_req",
                                             "throughput", "timestamp"};
    int *const roles[] = {&AL, &AR, &ALD, &ARD, &ACC, &DR, &ND, &RUN, &TP, &TS};
    int found[10];
    double l[MAXC], h[MAXC];
    for (int r = 0; r < 10; r++) found[r] = -1;
    for (Py_ssize_t i = 0; i < m; i++) {
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, i));
        if (!name) return NULL;
        l[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(lo, i));
        h[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(hi, i));
        if (PyErr_Occurred()) return NULL;
        for (int r = 0; r < 10; r++)
            if (strcmp(name, role_names[r]) == 0) found[r] = (int)i;
    }
    for (int r = 0; r < 10; r++)
        if (found[r] < 0) {
            PyErr_Format(PyExc_ValueError, "layout: no column %s", role_names[r]);
            return NULL;
        }
    for (int r = 0; r < 10; r++) *roles[r] = found[r];
    for (Py_ssize_t i = 0; i < m; i++) LO[i] = l[i], HI[i] = h[i];
    NC = (int)m;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"layout", layout, METH_VARARGS, "Set the column layout: layout(names, lo, hi)."},
    {"precompute", precompute, METH_VARARGS, "Reduce a run in the common form (see the module text), or None."},
    {"steps", steps, METH_VARARGS, "Sums of whole batches from running sums (estimate.Batches)."},
    {"pairs", pairs, METH_VARARGS, "Neighbouring batch sums added (estimate.Batches halving)."},
    {"reservoir", reservoir, METH_VARARGS, "Reservoir draws of requests.RequestSet (see _reduce_requests.h)."},
    {"tally", tally, METH_VARARGS, "The kept values, their bins and sum (requests.RequestSet, see _reduce_requests.h)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_reduce", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__reduce(void) {
    init_edges();
    return PyModule_Create(&module);
}
