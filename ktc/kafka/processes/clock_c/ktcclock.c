/* ktcclock: a wall clock ktc sets, preloaded into a broker's JVM (LD_PRELOAD).
 *
 * KTC_CLOCK_FILE names a file of 8 bytes: one native-endian int64, epoch milliseconds, that ktc
 * rewrites in place through a shared mapping (processes/clock.py).  Every wall-clock read of the
 * process -- clock_gettime(CLOCK_REALTIME[_COARSE]), gettimeofday, time -- returns that instant,
 * frozen, read with one atomic load: no file read, no parsing, no lock.  Monotonic clocks are not
 * touched, so the JVM's timed waits and Kafka's schedulers keep running.  When the file cannot be
 * mapped the real clock is used, and ktc's first verification (a LogAppendTime echo) says so.
 *
 * File modification times follow the same clock: the kernel stamps a write with the real time, so
 * after every write to a regular file (write, pwrite, writev, pwritev) its mtime is set to the
 * clock's instant.  Kafka's retention and ListOffsets fall back to a segment's mtime when it has no
 * timestamps; with this they read the broker's clock at the last append, as the model does.  Writes
 * through a memory mapping (Kafka's index files) are not seen here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const volatile int64_t *fake_ms;
static int (*real_clock_gettime)(clockid_t, struct timespec *);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);

__attribute__((constructor)) static void ktcclock_init(void) {
    real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    real_pwrite = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
    real_writev = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    real_pwritev = (ssize_t (*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "pwritev64");
    const char *path = getenv("KTC_CLOCK_FILE");
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) return;
    void *mapped = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped != MAP_FAILED) fake_ms = (const volatile int64_t *)mapped;
}

static int is_wall_clock(clockid_t id) {
    return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
}

static int64_t now_ms(void) {
    return __atomic_load_n(fake_ms, __ATOMIC_ACQUIRE);
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    if (fake_ms != NULL && is_wall_clock(id)) {
        int64_t ms = now_ms();
        ts->tv_sec = (time_t)(ms / 1000);
        ts->tv_nsec = (long)(ms % 1000) * 1000000L;
        return 0;
    }
    if (real_clock_gettime == NULL) return -1;
    return real_clock_gettime(id, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    (void)tz;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
    if (out != NULL) *out = ts.tv_sec;
    return ts.tv_sec;
}

/* After a write to a regular file, its mtime is the clock's instant (errno as the write left it). */
static ssize_t stamped(int fd, ssize_t written) {
    struct stat st;
    int saved = errno;
    if (fake_ms != NULL && written > 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        int64_t ms = now_ms();
        struct timespec times[2] = {{0, UTIME_OMIT}, {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L}};
        futimens(fd, times);
    }
    errno = saved;
    return written;
}

ssize_t write(int fd, const void *buf, size_t count) {
    return stamped(fd, real_write(fd, buf, count));
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    return stamped(fd, real_pwrite(fd, buf, count, offset));
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    return stamped(fd, real_pwrite(fd, buf, count, offset));
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    return stamped(fd, real_writev(fd, iov, iovcnt));
}

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
    return stamped(fd, real_pwritev(fd, iov, iovcnt, offset));
}

ssize_t pwritev64(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
    return stamped(fd, real_pwritev(fd, iov, iovcnt, offset));
}
