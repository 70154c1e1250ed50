/* Code object readers (ROCr CodeObjectReaderImpl): from a file descriptor,
 * whose contents are read at creation, or from memory, which the reader
 * only refers to, as ROCr's does. */
#include "hsa_executable.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct reader {
    const void *data;
    size_t size;
    void *owned;                 /* the file's contents */
    struct reader *next;
} reader_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static reader_t *readers;

static hsa_status_t add(const void *data, size_t size, void *owned, hsa_code_object_reader_t *out) {
    reader_t *r = malloc(sizeof *r);
    if (!r) {
        free(owned);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    *r = (reader_t){data, size, owned, NULL};
    pthread_mutex_lock(&lock);
    r->next = readers;
    readers = r;
    pthread_mutex_unlock(&lock);
    out->handle = (uint64_t)(uintptr_t)r;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_code_object_reader_create_from_file(hsa_file_t file, hsa_code_object_reader_t *code_object_reader) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(code_object_reader);
    if (file == -1) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    off_t size = lseek(file, 0, SEEK_END);
    if (size == (off_t)-1) return HSA_STATUS_ERROR_INVALID_FILE;
    if (size == 0) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    char *data = malloc((size_t)size);
    if (!data) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    for (off_t done = 0; done < size;) {
        ssize_t n = pread(file, data + done, (size_t)(size - done), done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            free(data);
            return HSA_STATUS_ERROR_INVALID_FILE;
        }
        done += n;
    }
    return add(data, (size_t)size, data, code_object_reader);
}

hsa_status_t hsa_code_object_reader_create_from_memory(const void *code_object, size_t size,
                                                       hsa_code_object_reader_t *code_object_reader) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(code_object);
    HSA_CHECK_PTR(code_object_reader);
    if (size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    return add(code_object, size, NULL, code_object_reader);
}

/* caller holds lock */
static reader_t **find(hsa_code_object_reader_t handle) {
    reader_t **p = &readers;
    while (*p && (uint64_t)(uintptr_t)*p != handle.handle) p = &(*p)->next;
    return p;
}

hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t code_object_reader) {
    HSA_CHECK_OPEN();
    pthread_mutex_lock(&lock);
    reader_t **p = find(code_object_reader), *r = *p;
    if (r) *p = r->next;
    pthread_mutex_unlock(&lock);
    if (!r) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
    free(r->owned);
    free(r);
    return HSA_STATUS_SUCCESS;
}

bool stub_reader_data(hsa_code_object_reader_t handle, const void **data, size_t *size) {
    pthread_mutex_lock(&lock);
    reader_t *r = *find(handle);
    if (r) {
        *data = r->data;
        *size = r->size;
    }
    pthread_mutex_unlock(&lock);
    return r != NULL;
}

void stub_readers_shutdown(void) {
    pthread_mutex_lock(&lock);
    reader_t *list = readers;
    readers = NULL;
    pthread_mutex_unlock(&lock);
    while (list) {
        reader_t *next = list->next;
        free(list->owned);
        free(list);
        list = next;
    }
}
