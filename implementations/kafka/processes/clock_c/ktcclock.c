/* ktcclock: a wall clock ktc sets, preloaded into a broker's JVM (LD_PRELOAD).
 *
 * KTC_CLOCK_FILE names a file of 8 bytes: one native-endian int64, epoch milliseconds, that ktc
 * rewrites in place through a shared mapping (processes/clock.py).  Every wall-clock read of the
 * process -- clock_gettime(CLOCK_REALTIME[_COARSE]), gettimeofday, time -- returns that instant,
 * frozen, read with one atomic load: no file read, no parsing, no lock.  Monotonic clocks are not
 * touched, so the JVM's timed waits and Kafka's schedulers keep running.  When the file cannot be
 * mapped the real clock is used, and ktc's first verification (a LogAppendTime echo) says so.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const volatile int64_t *fake_ms;
static int (*real_clock_gettime)(clockid_t, struct timespec *);

__attribute__((constructor)) static void ktcclock_init(void) {
    real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
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
