/* The interruptible wait of wait.h: a query spin, then the blocking call on a
 * pooled helper thread, waited for in slices on a condition variable. */
#include "wait.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include <hip/hip_runtime_api.h>

struct rocpy_wait_job {
    int kind;
    void *handle;
    int device;
    int status;
    int done;               /* under mutex */
    atomic_int refs;        /* the caller's and the helper's */
    pthread_mutex_t mutex;
    pthread_cond_t cond;    /* CLOCK_MONOTONIC */
    rocpy_wait_job *next;   /* the pool's queue */
};

static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cond = PTHREAD_COND_INITIALIZER;
static rocpy_wait_job *queue_head, *queue_tail;
static int queued, idle, helpers, busy;

#define MAX_IDLE 4          /* helpers beyond this many idle ones exit */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void unref(rocpy_wait_job *job)
{
    if (atomic_fetch_sub(&job->refs, 1) == 1) {
        pthread_cond_destroy(&job->cond);
        pthread_mutex_destroy(&job->mutex);
        free(job);
    }
}

static int blocking_call(rocpy_wait_job *job)
{
    if (job->device >= 0) {
        hipError_t st = hipSetDevice(job->device);
        if (st != hipSuccess)
            return (int)st;
    }
    switch (job->kind) {
    case ROCPY_WAIT_STREAM:
        return (int)hipStreamSynchronize((hipStream_t)job->handle);
    case ROCPY_WAIT_EVENT:
        return (int)hipEventSynchronize((hipEvent_t)job->handle);
    default:
        return (int)hipDeviceSynchronize();
    }
}

static void *helper_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool_mutex);
    for (;;) {
        while (!queue_head) {
            if (idle >= MAX_IDLE) {
                helpers--;
                pthread_mutex_unlock(&pool_mutex);
                return NULL;
            }
            idle++;
            pthread_cond_wait(&pool_cond, &pool_mutex);
            idle--;
        }
        rocpy_wait_job *job = queue_head;
        queue_head = job->next;
        if (!queue_head)
            queue_tail = NULL;
        queued--;
        busy++;
        pthread_mutex_unlock(&pool_mutex);

        int st = blocking_call(job);
        pthread_mutex_lock(&job->mutex);
        job->status = st;
        job->done = 1;
        pthread_cond_signal(&job->cond);
        pthread_mutex_unlock(&job->mutex);
        unref(job);

        pthread_mutex_lock(&pool_mutex);
        busy--;
    }
}

/* Queue `job` for a helper; start one if none is idle.  0, or -1 when no
 * thread could be started. */
static int submit(rocpy_wait_job *job)
{
    int rc = 0;
    pthread_mutex_lock(&pool_mutex);
    job->next = NULL;
    if (queue_tail)
        queue_tail->next = job;
    else
        queue_head = job;
    queue_tail = job;
    queued++;
    /* idle counts helpers woken but not yet running; they and the queue shrink together */
    if (idle >= queued) {
        pthread_cond_signal(&pool_cond);
    } else {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, helper_main, NULL) == 0) {
            helpers++;
        } else if (idle == 0 && helpers == busy) {
            /* nobody will ever take it: take it back */
            rocpy_wait_job **p = &queue_head, *prev = NULL;
            while (*p != job) {
                prev = *p;
                p = &(*p)->next;
            }
            *p = NULL;
            queue_tail = prev;
            queued--;
            rc = -1;
        }
        pthread_attr_destroy(&attr);
    }
    pthread_mutex_unlock(&pool_mutex);
    return rc;
}

static rocpy_wait_job *start(int kind, void *handle, int device)
{
    rocpy_wait_job *job = calloc(1, sizeof *job);
    pthread_condattr_t ca;
    if (!job)
        return NULL;
    job->kind = kind;
    job->handle = handle;
    job->device = device;
    atomic_init(&job->refs, 2);
    pthread_mutex_init(&job->mutex, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&job->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (submit(job) != 0) {
        pthread_cond_destroy(&job->cond);
        pthread_mutex_destroy(&job->mutex);
        free(job);
        return NULL;
    }
    return job;
}

#define ROCPY_WAIT_YIELD_AFTER_NS 20000u

/* 0 and the status when the spin saw the work finish; 1 when it did not. */
static int spin(int kind, void *handle, uint64_t spin_ns, int *status)
{
    uint64_t start = now_ns(), deadline = start + spin_ns, t = start;
    for (;;) {
        /* past the first tens of microseconds, yield between queries (CUDA's
         * cudaDeviceScheduleYield): the runtime's own threads (the stub's
         * workers) keep a core on a small machine */
        if (t - start > ROCPY_WAIT_YIELD_AFTER_NS)
            sched_yield();
        hipError_t st = kind == ROCPY_WAIT_STREAM ? hipStreamQuery((hipStream_t)handle)
                                                  : hipEventQuery((hipEvent_t)handle);
        /* an error is the synchronize's too: both resolve the handle and apply the
         * same capture rule first (hipamd's CHECK_STREAM_CAPTURE_SUPPORTED, the
         * stub's capture_rule_for_wait), and on the caller's thread, whose
         * capture mode is the one that counts */
        if (st != hipErrorNotReady) {
            *status = (int)st;
            return 0;
        }
        t = now_ns();
        if (t >= deadline)
            return 1;
    }
}

static int poll_wait(void *handle, uint64_t spin_ns, uint64_t slice_ns, int *status)
{
    uint64_t start_ns = now_ns(), nap = 10000;
    for (;;) {
        hipError_t st = hipStreamQuery((hipStream_t)handle);
        if (st != hipErrorNotReady) {
            *status = (int)st;
            return 0;
        }
        uint64_t elapsed = now_ns() - start_ns;
        if (elapsed >= spin_ns + slice_ns)
            return 1;
        if (elapsed < spin_ns)
            continue;
        uint64_t left = spin_ns + slice_ns - elapsed;
        struct timespec ts = {0, (long)(nap < left ? nap : left)};
        nanosleep(&ts, NULL);
        if (nap < 1000000)
            nap *= 2;
    }
}

int rocpy_wait(rocpy_wait_job **jobp, int kind, void *handle, int device,
               uint64_t spin_ns, uint64_t slice_ns, int *status)
{
    rocpy_wait_job *job = *jobp;
    if (kind == ROCPY_WAIT_STREAM_POLL)
        return poll_wait(handle, spin_ns, slice_ns, status);
    if (!job) {
        int queryable = kind != ROCPY_WAIT_DEVICE;
        if (spin_ns && queryable)
            return spin(kind, handle, spin_ns, status);
        job = start(kind, handle, device);
        if (!job)
            return -1;
        *jobp = job;
    }
    pthread_mutex_lock(&job->mutex);
    if (!job->done && slice_ns) {
        uint64_t t = now_ns() + slice_ns;
        struct timespec until = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
        while (!job->done) {
            if (pthread_cond_timedwait(&job->cond, &job->mutex, &until) == ETIMEDOUT)
                break;
        }
    }
    int done = job->done;
    if (done)
        *status = job->status;
    pthread_mutex_unlock(&job->mutex);
    if (!done)
        return 1;
    *jobp = NULL;
    unref(job);
    return 0;
}

int rocpy_wait_streams_idle(void *const *streams, int n, uint64_t spin_ns)
{
    uint64_t deadline = now_ns() + spin_ns;
    int i = -1;                 /* -1: the null stream */
    for (;;) {
        for (; i < n; i++) {
            hipError_t st = hipStreamQuery(i < 0 ? NULL : (hipStream_t)streams[i]);
            if (st == hipErrorNotReady)
                break;
            if (st != hipSuccess)
                return 0;       /* the wait proper reports what the device sync says */
        }
        if (i == n)
            return 1;
        if (now_ns() >= deadline)
            return 0;
    }
}

int rocpy_wait_helpers(int *busy_out)
{
    pthread_mutex_lock(&pool_mutex);
    int n = helpers;
    if (busy_out)
        *busy_out = busy;
    pthread_mutex_unlock(&pool_mutex);
    return n;
}
