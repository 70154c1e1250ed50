/* The call queue of callqueue.h: a ring that grows (up to MAX_ITEMS) under
 * one mutex, and a condition variable for the single popper. */
#include "callqueue.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define INITIAL_ITEMS 256u
#define MAX_ITEMS (1u << 20)

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static rocpy_callqueue_item *ring;
static size_t capacity, head, count;
static int closed;
static uint64_t dropped;

/* Called with the mutex held. */
static int grow(void)
{
    size_t cap = capacity ? capacity * 2 : INITIAL_ITEMS;
    rocpy_callqueue_item *bigger;
    size_t first;

    if (cap > MAX_ITEMS)
        return -1;
    bigger = malloc(cap * sizeof *bigger);
    if (!bigger)
        return -1;
    /* unwrap: the oldest item goes to index 0 */
    first = capacity - head < count ? capacity - head : count;
    if (count) {
        memcpy(bigger, ring + head, first * sizeof *ring);
        memcpy(bigger + first, ring, (count - first) * sizeof *ring);
    }
    free(ring);
    ring = bigger;
    capacity = cap;
    head = 0;
    return 0;
}

int rocpy_callqueue_push(uint64_t token, int64_t a, int64_t b)
{
    rocpy_callqueue_item *slot;

    pthread_mutex_lock(&mutex);
    if (closed || (count == capacity && grow() != 0)) {
        dropped++;
        pthread_mutex_unlock(&mutex);
        return -1;
    }
    slot = &ring[(head + count) % capacity];
    slot->token = token;
    slot->a = a;
    slot->b = b;
    count++;
    pthread_cond_signal(&nonempty);
    pthread_mutex_unlock(&mutex);
    return 0;
}

int rocpy_callqueue_pop(rocpy_callqueue_item *out, int max)
{
    size_t n, i;

    if (max <= 0)
        return 0;
    pthread_mutex_lock(&mutex);
    while (count == 0 && !closed)
        pthread_cond_wait(&nonempty, &mutex);
    n = count < (size_t)max ? count : (size_t)max;
    for (i = 0; i < n; i++)
        out[i] = ring[(head + i) % capacity];
    if (n) {
        head = (head + n) % capacity;
        count -= n;
    }
    pthread_mutex_unlock(&mutex);
    return (int)n;
}

void rocpy_callqueue_shutdown(void)
{
    pthread_mutex_lock(&mutex);
    closed = 1;
    pthread_cond_broadcast(&nonempty);
    pthread_mutex_unlock(&mutex);
}

void rocpy_callqueue_reopen(void)
{
    pthread_mutex_lock(&mutex);
    closed = 0;
    pthread_mutex_unlock(&mutex);
}

uint64_t rocpy_callqueue_dropped(void)
{
    uint64_t n;

    pthread_mutex_lock(&mutex);
    n = dropped;
    pthread_mutex_unlock(&mutex);
    return n;
}

void rocpy_callqueue_host_fn(void *user)
{
    rocpy_callqueue_push((uint64_t)(uintptr_t)user, 0, 0);
}

void rocpy_callqueue_stream_cb(void *stream, int status, void *user)
{
    rocpy_callqueue_push((uint64_t)(uintptr_t)user, status, (int64_t)(intptr_t)stream);
}

bool rocpy_callqueue_signal_handler(int64_t value, void *user)
{
    rocpy_callqueue_push((uint64_t)(uintptr_t)user, value, 0);
    return false;
}

void rocpy_callqueue_queue_error(int status, void *queue, void *user)
{
    rocpy_callqueue_push((uint64_t)(uintptr_t)user, status, (int64_t)(intptr_t)queue);
}
