/*
 * A preload library for the crash tests (tests/restart_cli.rs): it counts
 * the writes a process makes to the file whose path ends in $KILL_FILE and
 * kills the process (SIGKILL) just before write number $KILL_AT_WRITE, so
 * that the writes before it reach the file and none after. Without
 * $KILL_AT_WRITE it only counts, and prints the count to stderr at exit
 * ("writes: N").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int target = -1;
static long count = 0;
static long kill_at = -1;

static void report(void) {
    if (kill_at < 0) fprintf(stderr, "writes: %ld\n", count);
}

static void watch(const char *path, int fd) {
    const char *suffix = getenv("KILL_FILE");
    if (!suffix || fd < 0) return;
    size_t n = strlen(path), m = strlen(suffix);
    if (n >= m && strcmp(path + n - m, suffix) == 0) {
        static int registered = 0;
        const char *k = getenv("KILL_AT_WRITE");
        target = fd;
        kill_at = k ? atol(k) : -1;
        if (!registered) {
            registered = 1;
            atexit(report);
        }
    }
}

static void before(int fd) {
    if (fd != target) return;
    count++;
    if (kill_at > 0 && count == kill_at) raise(SIGKILL);
}

#define OPEN(name)                                                          \
    int name(const char *path, int flags, ...) {                           \
        static int (*real)(const char *, int, ...) = 0;                    \
        if (!real) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name); \
        mode_t mode = 0;                                                    \
        if (flags & O_CREAT) {                                              \
            va_list ap;                                                     \
            va_start(ap, flags);                                            \
            mode = va_arg(ap, int);                                         \
            va_end(ap);                                                     \
        }                                                                   \
        int fd = real(path, flags, mode);                                   \
        watch(path, fd);                                                    \
        return fd;                                                          \
    }
OPEN(open)
OPEN(open64)

int openat(int dir, const char *path, int flags, ...) {
    static int (*real)(int, const char *, int, ...) = 0;
    if (!real) real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
    mode_t mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, int);
        va_end(ap);
    }
    int fd = real(dir, path, flags, mode);
    watch(path, fd);
    return fd;
}

#define PWRITE(name)                                                        \
    ssize_t name(int fd, const void *buf, size_t len, off_t off) {         \
        static ssize_t (*real)(int, const void *, size_t, off_t) = 0;      \
        if (!real) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, #name); \
        before(fd);                                                         \
        return real(fd, buf, len, off);                                     \
    }
PWRITE(pwrite)
PWRITE(pwrite64)

ssize_t write(int fd, const void *buf, size_t len) {
    static ssize_t (*real)(int, const void *, size_t) = 0;
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    before(fd);
    return real(fd, buf, len);
}
