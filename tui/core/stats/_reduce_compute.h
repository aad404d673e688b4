/* Part of _reduce.c (included once, there): exact sums (math.fsum's algorithm), the run being
 * reduced, and the first phase of the reduction: every number (prepare's chunks, load.bin_chunks'
 * bins) computed without the GIL into plain structs. */
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
    const double *c[MAXC];
    int present[MAXC]; /* printed on every record (1) or on none (0) */
    double mn[MAXC], mx[MAXC];
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
    int wzero;      /* weighted by a column printed on no record: every weight 0 (w is NULL) */
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
    const int wcol[6] = {sg ? RUN : ND, sg ? RUN : DR, -1, -1, ND, ND};
    for (int s = 0; s < 6; s++) {
        P->has[s] = R->present[col[s]];
        int absent = wcol[s] >= 0 && !R->present[wcol[s]];
        if (P->has[s] && !column_chunk(R, &P->cc[s], c[col[s]], absent ? NULL : wt[s], idx, m)) return 0;
        P->cc[s].wzero = P->has[s] && absent;
    }
    /* pooled (the counts' branches of prepare): each ratio over the records whose denominator is
     * printed (all or none, in the common form) */
    P->pooled = R->present[ACC];
    P->accepted = P->drafted = 0.0;
    if (P->pooled) {
        Py_ssize_t m_nd = R->present[ND] ? m : 0, m_dr = R->present[DR] ? m : 0;
        if (!ratio_chunk(R, &P->pl, c[ACC], c[ND], idx, m_nd) || !ratio_chunk(R, &P->pr, c[ACC], c[DR], idx, m_dr))
            return 0;
        P->accepted = fsum_of(R, c[ACC], idx, m);
        P->drafted = fsum_of(R, c[DR], idx, m_dr);
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
    const int32_t *idx; /* the bin's records in the run, in order (into bins_t.order) */
    Py_ssize_t m;
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
        e->idx = idx, e->m = m;
        e->lines = R->present[AL];
        e->pooled = R->present[ACC] && R->present[ND];
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
