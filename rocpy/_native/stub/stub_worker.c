/* A FIFO worker thread: tasks run one at a time, in submission order.
 * Streams, the copy engine and anything else that executes asynchronously
 * in the stub is made of these. Waiting never spins: condition variables. */
#include <stdlib.h>
#include <string.h>

#include "stub_core.h"

typedef struct task {
    stub_task_fn fn;
    void *arg;
    struct task *next;
} task_t;

struct stub_worker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;       /* work arrived or stop requested */
    pthread_cond_t done;       /* a task finished */
    task_t *head, *tail;
    uint64_t submitted, completed;
    bool stop;
    char name[32];
};

static void *worker_main(void *p) {
    stub_worker_t *w = p;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->head && !w->stop) pthread_cond_wait(&w->wake, &w->lock);
        if (!w->head) break;
        task_t *t = w->head;
        w->head = t->next;
        if (!w->head) w->tail = NULL;
        pthread_mutex_unlock(&w->lock);
        t->fn(t->arg);
        free(t);
        pthread_mutex_lock(&w->lock);
        w->completed++;
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

stub_worker_t *stub_worker_create(const char *name) {
    stub_worker_t *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->done, NULL);
    strncpy(w->name, name ? name : "stub-worker", sizeof w->name - 1);
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        free(w);
        return NULL;
    }
    return w;
}

uint64_t stub_worker_submit(stub_worker_t *w, stub_task_fn fn, void *arg) {
    task_t *t = malloc(sizeof *t);
    if (!t) return 0;
    t->fn = fn;
    t->arg = arg;
    t->next = NULL;
    pthread_mutex_lock(&w->lock);
    if (w->tail) w->tail->next = t; else w->head = t;
    w->tail = t;
    uint64_t ticket = ++w->submitted;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    return ticket;
}

void stub_worker_wait_ticket(stub_worker_t *w, uint64_t ticket) {
    pthread_mutex_lock(&w->lock);
    while (w->completed < ticket) pthread_cond_wait(&w->done, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

void stub_worker_drain(stub_worker_t *w) {
    pthread_mutex_lock(&w->lock);
    uint64_t target = w->submitted;
    while (w->completed < target) pthread_cond_wait(&w->done, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

bool stub_worker_ticket_done(stub_worker_t *w, uint64_t ticket) {
    pthread_mutex_lock(&w->lock);
    bool done = w->completed >= ticket;
    pthread_mutex_unlock(&w->lock);
    return done;
}

bool stub_worker_idle(stub_worker_t *w) {
    pthread_mutex_lock(&w->lock);
    bool idle = w->completed == w->submitted;
    pthread_mutex_unlock(&w->lock);
    return idle;
}

uint64_t stub_worker_last_ticket(stub_worker_t *w) {
    pthread_mutex_lock(&w->lock);
    uint64_t t = w->submitted;
    pthread_mutex_unlock(&w->lock);
    return t;
}

bool stub_worker_is_current(stub_worker_t *w) {
    return pthread_equal(pthread_self(), w->thread);
}

void stub_worker_destroy(stub_worker_t *w) {
    if (!w) return;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);   /* runs what is queued, then exits */
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->done);
    free(w);
}
