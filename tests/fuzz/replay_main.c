/* replay_main.c - runs fuzz_api's LLVMFuzzerTestOneInput over files and directories: the corpus and every kept crash. */
#include <duet/duet.h>

#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int g_files;
static const char *g_current;

/* A violated invariant aborts: say which input did it. */
static void on_abort(int sig)
{
    (void)sig;
    if (g_current) {
        fputs("fuzz_replay: the input that failed: ", stderr);
        fputs(g_current, stderr);
        fputs("\n", stderr);
    }
    signal(SIGABRT, SIG_DFL);
    raise(SIGABRT);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
        return 1;
    }
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            unsigned char *grown = (unsigned char *)realloc(buf, cap);
            if (!grown) {
                free(buf);
                fclose(f);
                return 1;
            }
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    fclose(f);
    /* A crash aborts the process: the test fails and on_abort names the input. */
    if (getenv("DUET_FUZZ_TRACE")) fprintf(stderr, "fuzz_replay: %s (%zu bytes)\n", path, n);
    g_current = path;
    LLVMFuzzerTestOneInput(buf, n);
    g_current = NULL;
    free(buf);
    g_files++;
    return 0;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "fuzz_replay: %s does not exist\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) return run_file(path);
    DIR *d = opendir(path);
    if (!d) return 1;
    int bad = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        /* ., .., .gitkeep and the README that says what each input found */
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md")) continue;
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        bad |= run_path(full);
    }
    closedir(d);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0;
    /* The target drives a context of the built backend: with no device (a GPU build on a
     * machine without one) there is nothing to replay, which is a skip, not a pass. */
    int count = 0;
    if (duet_device_count(&count) != DUET_SUCCESS || count < 1) {
        printf("fuzz_replay: no %s device: %s\n", duet_backend_name(), duet_last_error());
        return 77;
    }
    signal(SIGABRT, on_abort);
    for (int i = 1; i < argc; i++) bad |= run_path(argv[i]);
    printf("fuzz_replay: %d inputs replayed, no invariant violated\n", g_files);
    return bad;
}
