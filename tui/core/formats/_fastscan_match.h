/* Part of _fastscan.c (included once, there, after the program's types): matching one line
 * against a shape's program of ops (the interpreter: literals, fields and their numbers, clocks,
 * captures, repeats and optional groups, with marks to back out of a failed choice). */
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
