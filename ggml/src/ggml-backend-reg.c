// ggml-backend-reg.c - the backend registry: backends by name, each with an init function taking
// a parameter string and a default buffer type. The built-in entries (the CPU backend and the
// CPU_REPACK buffer type) are registered on first use; other backends (CUDA, Metal, Go
// backends) call ggml_backend_register.
//
// The list of built-ins is the one place outside cpu/ that names the CPU backend, through the
// declarations of ggml-backend-internal.h (as a library's list of compiled-in backends must).

#include "ggml-backend-impl.h"
#include "ggml-backend-internal.h"
#include "ggml-impl.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>


#define GGML_X_MAX_BACKENDS_REG 16
#define GGML_X_REG_NAME_MAX     128

struct bk_reg_entry {
    char name[GGML_X_REG_NAME_MAX];
    ggml_backend_init_fn init_fn;
    ggml_backend_buffer_type_t default_buffer_type;
    void * user_data;
};

static struct bk_reg_entry bk_registry[GGML_X_MAX_BACKENDS_REG];
static size_t              bk_registry_count = 0;
static pthread_mutex_t     bk_registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t      bk_registry_once  = PTHREAD_ONCE_INIT;

static bool bk_register_locked(const char * name, ggml_backend_init_fn init_fn,
                               ggml_backend_buffer_type_t default_buffer_type, void * user_data);

static void bk_registry_init(void) {
    pthread_mutex_lock(&bk_registry_mutex);
    bk_register_locked("CPU", ggml_x_backend_reg_cpu_init, ggml_backend_cpu_buffer_type(), NULL);
    bk_register_locked("CPU_REPACK", ggml_x_backend_reg_cpu_init, ggml_x_backend_cpu_repack_buffer_type(), NULL);
    pthread_mutex_unlock(&bk_registry_mutex);
}

static void bk_registry_ensure(void) {
    pthread_once(&bk_registry_once, bk_registry_init);
}

static bool bk_register_locked(const char * name, ggml_backend_init_fn init_fn,
                               ggml_backend_buffer_type_t default_buffer_type, void * user_data) {
    if (bk_registry_count >= GGML_X_MAX_BACKENDS_REG) {
        return false;
    }
    struct bk_reg_entry * e = &bk_registry[bk_registry_count];
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->init_fn             = init_fn;
    e->default_buffer_type = default_buffer_type;
    e->user_data           = user_data;
    bk_registry_count++;
    return true;
}

GGML_CALL void ggml_backend_register(const char * name, ggml_backend_init_fn init_fn, ggml_backend_buffer_type_t default_buffer_type, void * user_data) {
    GGML_X_CHECK_VOID(NULL, name != NULL && name[0] != '\0', "ggml_backend_register: name is empty");
    GGML_X_CHECK_VOID(NULL, strlen(name) < GGML_X_REG_NAME_MAX, "ggml_backend_register: name too long (%zu bytes)", strlen(name));
    GGML_X_CHECK_VOID(NULL, init_fn != NULL, "ggml_backend_register: init_fn is NULL");
    bk_registry_ensure();

    pthread_mutex_lock(&bk_registry_mutex);
    bool ok = bk_register_locked(name, init_fn, default_buffer_type, user_data);
    pthread_mutex_unlock(&bk_registry_mutex);
    GGML_X_CHECK_VOID(NULL, ok, "ggml_backend_register: registry full (%d backends), cannot add %s", GGML_X_MAX_BACKENDS_REG, name);
}

size_t ggml_backend_reg_get_count(void) {
    bk_registry_ensure();
    pthread_mutex_lock(&bk_registry_mutex);
    size_t n = bk_registry_count;
    pthread_mutex_unlock(&bk_registry_mutex);
    return n;
}

size_t ggml_backend_reg_find_by_name(const char * name) {
    bk_registry_ensure();
    if (name == NULL) {
        return SIZE_MAX;
    }
    size_t found = SIZE_MAX;
    pthread_mutex_lock(&bk_registry_mutex);
    for (size_t i = 0; i < bk_registry_count; i++) {
        if (strcmp(bk_registry[i].name, name) == 0) {
            found = i;
            break;
        }
    }
    pthread_mutex_unlock(&bk_registry_mutex);
    return found;
}

// copy out entry i; false after reporting when i is out of range
static bool bk_reg_entry_get(const char * fn, size_t i, struct bk_reg_entry * out) {
    bk_registry_ensure();
    pthread_mutex_lock(&bk_registry_mutex);
    size_t n = bk_registry_count;
    if (i < n) {
        *out = bk_registry[i];
    }
    pthread_mutex_unlock(&bk_registry_mutex);
    if (i >= n) {
        ggml_x_error(NULL, "%s: index %zu out of range (%zu backends registered)", fn, i, n);
        return false;
    }
    return true;
}

ggml_backend_t ggml_backend_reg_init_backend_from_str(const char * backend_str) {
    GGML_X_CHECK_RET(NULL, backend_str != NULL, NULL, "ggml_backend_reg_init_backend_from_str: backend_str is NULL");

    char name[GGML_X_REG_NAME_MAX];
    const char * params = strchr(backend_str, ':');
    size_t name_len = params != NULL ? (size_t) (params - backend_str) : strlen(backend_str);
    if (params != NULL) {
        params++;
    } else {
        params = "";
    }
    if (name_len >= sizeof(name)) {
        ggml_x_backend_soft_error("ggml_backend_reg_init_backend_from_str: backend name too long in '%s'", backend_str);
        return NULL;
    }
    memcpy(name, backend_str, name_len);
    name[name_len] = '\0';

    size_t i = ggml_backend_reg_find_by_name(name);
    if (i == SIZE_MAX) {
        ggml_x_backend_soft_error("ggml_backend_reg_init_backend_from_str: backend %s not found", name);
        return NULL;
    }
    return ggml_backend_reg_init_backend(i, params);
}

const char * ggml_backend_reg_get_name(size_t i) {
    bk_registry_ensure();
    pthread_mutex_lock(&bk_registry_mutex);
    size_t n = bk_registry_count;
    // entries are never removed, so the name stays valid after unlocking
    const char * name = i < n ? bk_registry[i].name : NULL;
    pthread_mutex_unlock(&bk_registry_mutex);
    GGML_X_CHECK_RET(NULL, name != NULL, NULL, "ggml_backend_reg_get_name: index %zu out of range (%zu backends registered)", i, n);
    return name;
}

ggml_backend_t ggml_backend_reg_init_backend(size_t i, const char * params) {
    struct bk_reg_entry e;
    if (!bk_reg_entry_get("ggml_backend_reg_init_backend", i, &e)) {
        return NULL;
    }
    return e.init_fn(params != NULL ? params : "", e.user_data);
}

ggml_backend_buffer_type_t ggml_backend_reg_get_default_buffer_type(size_t i) {
    struct bk_reg_entry e;
    if (!bk_reg_entry_get("ggml_backend_reg_get_default_buffer_type", i, &e)) {
        return NULL;
    }
    return e.default_buffer_type;
}

ggml_backend_buffer_t ggml_backend_reg_alloc_buffer(size_t i, size_t size) {
    struct bk_reg_entry e;
    if (!bk_reg_entry_get("ggml_backend_reg_alloc_buffer", i, &e)) {
        return NULL;
    }
    GGML_X_CHECK_RET(NULL, e.default_buffer_type != NULL, NULL,
                     "ggml_backend_reg_alloc_buffer: backend %s has no default buffer type", e.name);
    return ggml_backend_buft_alloc_buffer(e.default_buffer_type, size);
}
