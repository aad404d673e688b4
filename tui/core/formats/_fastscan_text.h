/* Part of _fastscan.c (included once, there): growable buffers, numbers read without strtod,
 * and the canonical line shapes of grammar.SHAPES (SGLang decode lines, the vLLM prefix, spec and
 * engine bodies). */
typedef struct {
    char *v;
    Py_ssize_t n, cap;
} buf_t;

static int push(buf_t *b, const void *x, Py_ssize_t k) {
    if (b->n + k > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 1 << 15;
        while (cap < b->n + k) cap *= 2;
        char *v = (char *)realloc(b->v, (size_t)cap);
        if (!v) return -1;
        b->v = v;
        b->cap = cap;
    }
    memcpy(b->v + b->n, x, (size_t)k);
    b->n += k;
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_word(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline int lit_n(const char **p, const char *end, const char *s, size_t k) {
    if ((size_t)(end - *p) < k || memcmp(*p, s, k) != 0) return 0;
    *p += k;
    return 1;
}
/* a literal of known length (string constants only) */
#define lit(p, end, s) lit_n((p), (end), (s), sizeof(s) - 1)

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* \d+ (want_fraction 0) or \d+\.\d+ (1); extra_scale adds powers of ten to the divisor
 * (percent: 2). At most 15 digits, else refused. */
static int number(const char **p, const char *end, int want_fraction, int extra_scale, double *out) {
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
    *out = (double)m / POW10[frac + (extra_scale > 0 ? extra_scale : 0)];
    *p = q;
    return 1;
}

static int decimal(const char **p, const char *e, double *o) { return number(p, e, 1, 0, o); }
static int integer(const char **p, const char *e, double *o) { return number(p, e, 0, 0, o); }
static int percent(const char **p, const char *e, double *o) { return number(p, e, 1, 2, o) && lit(p, e, "%"); }

static int two(const char *s, int *v) {
    if (!is_digit(s[0]) || !is_digit(s[1])) return 0;
    *v = (s[0] - '0') * 10 + (s[1] - '0');
    return 1;
}

/* days since 1970-01-01 of a proleptic Gregorian date (linear in d, like calendar.timegm) */
static long long days_from_civil(long long y, long long m, long long d) {
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

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

static int end_of_line(const char *p, const char *e) {
    if (p < e && *p == '\r') p++;
    return p == e;
}

/* SGLang: "[YYYY-MM-DD HH:MM:SS TAGS] Decode batch[,.] ..." over [s, e) (e at the newline). */
static int decode_line(const char *s, const char *e, const char **tag_s, const char **tag_e, double *v) {
    const char *p = s;
    static const char shape[] = "[dddd-dd-dd dd:dd:dd";
    if (e - p < 20) return 0;
    for (int i = 0; i < 20; i++) {
        char c = p[i], want = shape[i];
        if (want == 'd' ? !is_digit(c) : c != want) return 0;
    }
    int y = (p[1] - '0') * 1000 + (p[2] - '0') * 100 + (p[3] - '0') * 10 + (p[4] - '0');
    int mo = 0, d = 0, h = 0, mi = 0, sec = 0; /* the shape check above made them digits */
    two(p + 6, &mo), two(p + 9, &d), two(p + 12, &h), two(p + 15, &mi), two(p + 18, &sec);
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return 0;
    v[C_TS] = (double)(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec);
    p += 20;
    const char *t = p;
    while (p < e && *p != ']') p++;
    if (p >= e || !tags_ok(t, p)) return 0;
    *tag_s = t;
    *tag_e = p;
    if (!lit(&p, e, "] Decode batch")) return 0;
    if (p >= e || (*p != ',' && *p != '.')) return 0;
    p++;
    if (!lit(&p, e, " #running-req: ") || !integer(&p, e, &v[C_RUN])) return 0;
    if (!lit(&p, e, ", #token: ") || !integer(&p, e, &v[C_TOK])) return 0;
    if (!lit(&p, e, ", token usage: ") || !decimal(&p, e, &v[C_USAGE])) return 0;
    if (!lit(&p, e, ", accept len: ") || !decimal(&p, e, &v[C_AL])) return 0;
    if (!lit(&p, e, ", accept rate: ") || !decimal(&p, e, &v[C_AR])) return 0;
    if (!lit(&p, e, ", ")) return 0;
    if (!(lit(&p, e, "cuda") || lit(&p, e, "npu") || lit(&p, e, "cpu"))) return 0;
    if (!lit(&p, e, " graph: ")) return 0;
    if (!(lit(&p, e, "True") || lit(&p, e, "False"))) return 0;
    if (!lit(&p, e, ", gen throughput (token/s): ") || !decimal(&p, e, &v[C_TP])) return 0;
    if (!lit(&p, e, ", #queue-req: ") || !integer(&p, e, &v[C_QUEUE])) return 0;
    if (p < e && *p == ',') {
        p++;
        if (p < e && *p == ' ') p++;
    }
    return end_of_line(p, e);
}

/* vLLM prefix: "(PROC pid=N) INFO MM-DD HH:MM:SS[.f{1,6}] [file.py:N] "; stamp = mo, d, h, mi, s */
static int vllm_prefix(const char **pp, const char *e, const char **proc_s, const char **proc_e, int st[5],
                       double *frac) {
    const char *p = *pp;
    *proc_s = *proc_e = NULL;
    if (p < e && *p == '(') {
        const char *q = p + 1;
        if (q >= e || !is_word(*q)) return 0;
        while (q < e && (is_word(*q) || *q == ' ')) q++;
        /* q at the first char outside [\w ]: must be '=' of " pid=" */
        if (q >= e || *q != '=' || q - (p + 1) < 5 || memcmp(q - 4, " pid", 4) != 0) return 0;
        q++;
        const char *dg = q;
        while (q < e && is_digit(*q)) q++;
        if (q == dg || q + 1 >= e || q[0] != ')' || q[1] != ' ') return 0;
        *proc_s = p + 1;
        *proc_e = q;
        p = q + 2;
    }
    if (e - p < 20 || !lit(&p, e, "INFO ")) return 0;
    if (!two(p, &st[0]) || p[2] != '-' || !two(p + 3, &st[1]) || p[5] != ' ' || !two(p + 6, &st[2]) ||
        p[8] != ':' || !two(p + 9, &st[3]) || p[11] != ':' || !two(p + 12, &st[4]))
        return 0;
    p += 14;
    *frac = 0.0;
    if (p < e && *p == '.') {
        p++;
        const char *f = p;
        unsigned long long m = 0;
        while (p < e && is_digit(*p) && p - f < 7) m = m * 10 + (unsigned long long)(*p++ - '0');
        if (p == f || p - f > 6) return 0;
        *frac = (double)m / POW10[p - f];
    }
    if (!lit(&p, e, " [")) return 0;
    const char *w = p;
    while (p < e && (is_word(*p) || *p == '.')) p++;
    if (p == w || !lit(&p, e, ":")) return 0;
    w = p;
    while (p < e && is_digit(*p)) p++;
    if (p == w || !lit(&p, e, "] ")) return 0;
    if (st[0] < 1 || st[0] > 12 || st[1] < 1 || st[1] > 31 || st[2] > 23 || st[3] > 59 || st[4] > 60) return 0;
    *pp = p;
    return 1;
}

static int spec_body(const char *p, const char *e, double *v, buf_t *pp, unsigned char *k) {
    double x;
    if (!lit(&p, e, "SpecDecoding metrics: ")) return 0;
    if (lit(&p, e, "Draft acceptance rate: ")) {
        if (!percent(&p, e, &v[C_AR]) || !lit(&p, e, ", ")) return 0;
    }
    if (!lit(&p, e, "Mean acceptance length: ") || !decimal(&p, e, &v[C_AL]) || !lit(&p, e, ", ")) return 0;
    if (lit(&p, e, "Accepted throughput: ")) {
        if (!decimal(&p, e, &x) || !lit(&p, e, " tokens/s, Drafted throughput: ") || !decimal(&p, e, &x) ||
            !lit(&p, e, " tokens/s, "))
            return 0;
    }
    if (!lit(&p, e, "Accepted: ") || !integer(&p, e, &v[C_ACC])) return 0;
    if (!lit(&p, e, " tokens, Drafted: ") || !integer(&p, e, &v[C_DRAFT])) return 0;
    if (!lit(&p, e, " tokens, Per-position acceptance rate: ")) return 0;
    int n = 0;
    double sum = 0.0; /* accepted / drafts: the printed length is 1 + this from vLLM 0.9 on */
    for (;;) {
        if (!decimal(&p, e, &x) || n == 255 || push(pp, &x, sizeof x)) return 0;
        n++;
        sum += x;
        const char *q = p;
        if (lit(&q, e, ", ") && q < e && is_digit(*q)) {
            p = q;
            continue;
        }
        break;
    }
    *k = (unsigned char)n;
    if (lit(&p, e, ", Avg Draft acceptance rate: ")) {
        if (!percent(&p, e, &v[C_AR])) return 0;
    }
    if (!end_of_line(p, e)) return 0;
    /* vLLM < 0.9 printed the length without the bonus token: the line parser's (vllm/spec.py) */
    if (fabs(v[C_AL] - sum) <= 0.006 + 0.0005 * n) return 0;
    v[C_ND] = v[C_DRAFT] / n;
    return 1;
}

static int engine_body(const char *p, const char *e, double ev[3]) {
    double x;
    if (!lit(&p, e, "Engine ") || !integer(&p, e, &ev[0])) return 0;
    if (!lit(&p, e, ": Avg prompt throughput: ") || !decimal(&p, e, &x)) return 0;
    if (!lit(&p, e, " tokens/s, Avg generation throughput: ") || !decimal(&p, e, &ev[1])) return 0;
    if (!lit(&p, e, " tokens/s, Running: ") || !integer(&p, e, &ev[2])) return 0;
    if (!lit(&p, e, " reqs, Waiting: ") || !integer(&p, e, &x)) return 0;
    if (!lit(&p, e, " reqs, GPU KV cache usage: ") || !percent(&p, e, &x)) return 0;
    if (!lit(&p, e, ", Prefix cache hit rate: ") || !percent(&p, e, &x)) return 0;
    return end_of_line(p, e);
}
