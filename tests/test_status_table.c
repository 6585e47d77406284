/* test_status_table.c - test_api's bad-input cases as one normalised line each, compared with status_table.expected. */
/*
 * Every backend must give the same status and the same message for the same bad input. This
 * program runs test_api's cases (the same source, built with DT_STATUS_TABLE) and prints one
 * line per case:
 *
 *     case | status | message
 *
 * where the case is the call as written in test_api.c (with #N for its N-th repetition), and
 * the message is normalised so that only what duet itself decides remains:
 *   - it is cut where a runtime-specific part starts (the name of a runtime call such as
 *     cudaMalloc or hipHostRegister, or the cpu backend's own account of an allocation);
 *   - in a message about a device limit ("the device's ..."), a number equal to one of the
 *     device's launch limits reads <limit>, and one above it <limit+1>;
 *   - the number of devices present reads <count>, also as the device asked for ("device (1)
 *     is out of range" on one device, "(2)" on two, read "(<count>)").
 * The lines are compared with tests/status_table.expected line for line, on whatever backend
 * was built: cpu in CI, cuda and hip in scripts/gpu-check.sh.
 *
 *   test_status_table EXPECTED          compare (exit 1 on any difference, 77 without a device)
 *   test_status_table --write EXPECTED  write the table (to regenerate the expected file)
 */
#define DT_STATUS_TABLE 1
#include "test_api.c"

#define TABLE_MAX 4096

static char *g_lines[TABLE_MAX];
static int g_nlines;
static int g_device_count; /* read once, before the cases: a call would clear their message */

/* Where a runtime-specific part of a message begins, or NULL. */
static const char *runtime_part(const char *msg)
{
    static const char *const markers[] = {
        " of device memory", " of host memory", "the host has", "aligned_alloc", "calloc",
        "realloc", "malloc", "pthread_", "nvrtc", "hiprtc",
    };
    const char *first = NULL;
    for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
        const char *p = strstr(msg, markers[i]);
        if (p && (!first || p < first)) first = p;
    }
    /* Runtime API names: cudaXxx, hipXxx, cuXxx (driver API). */
    for (const char *p = msg; *p; p++) {
        if (p > msg && is_ident(p[-1])) continue;
        size_t n = !strncmp(p, "cuda", 4) ? 4 : !strncmp(p, "hip", 3) ? 3 : !strncmp(p, "cu", 2) ? 2 : 0;
        if (n && isupper((unsigned char)p[n])) {
            if (!first || p < first) first = p;
            break;
        }
    }
    return first;
}

/* Appends the normalised msg to out. */
static void normalise(const char *msg, char *out, size_t size)
{
    char cut[1024];
    snprintf(cut, sizeof cut, "%s", msg);
    const char *rt = runtime_part(cut);
    if (rt) {
        size_t n = (size_t)(rt - cut);
        while (n > 0 && strchr(" :,(", cut[n - 1])) n--;
        cut[n] = '\0';
    }
    long long limits[9];
    int nl = 0;
    limits[nl++] = g_props.max_threads_per_block;
    for (int i = 0; i < 3; i++) limits[nl++] = g_props.max_block_dims[i];
    for (int i = 0; i < 3; i++) limits[nl++] = g_props.max_grid_dims[i];
    limits[nl++] = (long long)g_props.shared_mem_per_block;
    limits[nl++] = (long long)g_props.shared_mem_per_block_optin;
    const int count = g_device_count;
    const int about_limits = strstr(cut, "the device's") != NULL;
    const int about_count = strstr(cut, "present") != NULL;
    size_t o = 0;
    out[0] = '\0';
    for (const char *p = cut; *p && o + 16 < size;) {
        const int starts = isdigit((unsigned char)*p) && (p == cut || (!is_ident(p[-1]) && p[-1] != '['));
        if (!starts) {
            out[o++] = *p++;
            continue;
        }
        const char *q = p;
        while (isdigit((unsigned char)*q)) q++;
        long long v = strtoll(p, NULL, 10);
        const char *token = NULL;
        if (about_limits)
            for (int i = 0; i < nl && !token; i++)
                token = v == limits[i] ? "<limit>" : v == limits[i] + 1 ? "<limit+1>" : NULL;
        if (about_count && v == count && !strncmp(q, " device", 7)) {
            token = "<count> device(s)";
            q += 7;
            if (*q == 's') q++;
        } else if (about_count && v == count && p > cut && p[-1] == '(' && *q == ')') {
            token = "<count>"; /* the first device past the last: "device (2)" on two GPUs */
        }
        if (token) {
            o += (size_t)snprintf(out + o, size - o, "%s", token);
        } else {
            memcpy(out + o, p, (size_t)(q - p));
            o += (size_t)(q - p);
        }
        p = q;
    }
    out[o] = '\0';
}

static void status_table_add(const char *text, duet_status got, const char *msg)
{
    if (g_nlines == TABLE_MAX) return;
    /* The case's name: its text, numbered when the same text came before. */
    int seen = 0;
    size_t tlen = strlen(text);
    for (int i = 0; i < g_nlines; i++)
        if (!strncmp(g_lines[i], text, tlen) && (g_lines[i][tlen] == ' ' && (g_lines[i][tlen + 1] == '|' || g_lines[i][tlen + 1] == '#')))
            seen++;
    char norm[1024], name[600], line[2048];
    normalise(msg, norm, sizeof norm);
    if (seen)
        snprintf(name, sizeof name, "%s #%d", text, seen + 1);
    else
        snprintf(name, sizeof name, "%s", text);
    snprintf(line, sizeof line, "%s | %s | %s", name, duet_status_string(got), norm);
    g_lines[g_nlines] = (char *)malloc(strlen(line) + 1);
    if (g_lines[g_nlines]) strcpy(g_lines[g_nlines++], line);
}

int main(int argc, char **argv)
{
    const int write = argc == 3 && !strcmp(argv[1], "--write");
    if (argc != 2 && !write) {
        fprintf(stderr, "usage: test_status_table EXPECTED | --write EXPECTED\n");
        return 2;
    }
    if (duet_device_count(&g_device_count) != DUET_SUCCESS || g_device_count < 1) {
        printf("status table: no device (%s)\n", duet_last_error());
        return DT_SKIP;
    }
    const int checks_ok = run_all() == 0;
    if (write) {
        FILE *w = fopen(argv[2], "w");
        if (!w) {
            fprintf(stderr, "test_status_table: cannot write %s\n", argv[2]);
            return 1;
        }
        for (int i = 0; i < g_nlines; i++) fprintf(w, "%s\n", g_lines[i]);
        fclose(w);
        printf("status table (%s): %d cases written to %s\n", duet_backend_name(), g_nlines,
               argv[2]);
        return checks_ok ? 0 : 1;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "test_status_table: cannot open %s\n", argv[1]);
        return 1;
    }
    char line[4096];
    int n = 0, diffs = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (n < g_nlines && strcmp(line, g_lines[n]) != 0 && diffs++ < 20)
            fprintf(stderr, "line %d:\n  expected: %s\n  got:      %s\n", n + 1, line, g_lines[n]);
        if (n >= g_nlines && diffs++ < 20) fprintf(stderr, "line %d: missing: %s\n", n + 1, line);
        n++;
    }
    fclose(f);
    for (int i = n; i < g_nlines; i++)
        if (diffs++ < 20) fprintf(stderr, "line %d: extra: %s\n", i + 1, g_lines[i]);
    printf("status table (%s): %d cases, %d expected, %d differences\n", duet_backend_name(),
           g_nlines, n, diffs);
    for (int i = 0; i < g_nlines; i++) free(g_lines[i]);
    return diffs == 0 && checks_ok ? 0 : 1;
}
