#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/// The libcurl ABI that <curl/curl.h> describes (Debian's libcurl4).
static const char *const libraryName = "libcurl.so.4";

/// libcurl's functions, resolved once by `load`; all set, or `loadError` says why not.
static struct {
    CURLcode (*global_init)(long);
    const char *(*easy_strerror)(CURLcode);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    void (*free)(void *);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLSH *(*share_init)(void);
    CURLSHcode (*share_cleanup)(CURLSH *);
    CURLSHcode (*share_setopt)(CURLSH *, CURLSHoption, ...);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned);
    CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned);
    const char *(*url_strerror)(CURLUcode);
} curl;

static pthread_once_t loadOnce = PTHREAD_ONCE_INIT;
static char loadErrorText[512];
static const char *loadError;

static void load(void) {
    void *library = dlopen(libraryName, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(loadErrorText, sizeof loadErrorText, "couldn't load libcurl: %s", dlerror());
        loadError = loadErrorText;
        return;
    }
    const char *missing = NULL;
#define RESOLVE(field)                                                    \
    if (!missing && !(*(void **)&curl.field = dlsym(library, "curl_" #field))) \
        missing = "curl_" #field;
    RESOLVE(global_init) RESOLVE(easy_strerror) RESOLVE(easy_init) RESOLVE(easy_cleanup)
    RESOLVE(easy_setopt) RESOLVE(easy_getinfo) RESOLVE(slist_append) RESOLVE(slist_free_all)
    RESOLVE(free) RESOLVE(multi_init) RESOLVE(multi_cleanup) RESOLVE(multi_add_handle)
    RESOLVE(multi_remove_handle) RESOLVE(multi_perform) RESOLVE(multi_poll) RESOLVE(multi_wakeup)
    RESOLVE(multi_info_read) RESOLVE(multi_setopt) RESOLVE(share_init) RESOLVE(share_cleanup)
    RESOLVE(share_setopt) RESOLVE(url) RESOLVE(url_cleanup) RESOLVE(url_set) RESOLVE(url_get)
    RESOLVE(url_strerror)
#undef RESOLVE
    if (missing) {
        snprintf(loadErrorText, sizeof loadErrorText, "couldn't load libcurl: %s lacks %s", libraryName, missing);
        loadError = loadErrorText;
    }
}

const char *cp_curl_load_error(void) {
    pthread_once(&loadOnce, load);
    return loadError;
}

/// True when libcurl is loaded (loading it now if needed).
static inline int loaded(void) { return cp_curl_load_error() == NULL; }

CURLcode cp_curl_global_init(long flags) { return loaded() ? curl.global_init(flags) : CURLE_FAILED_INIT; }
const char *cp_curl_easy_strerror(CURLcode code) { return loaded() ? curl.easy_strerror(code) : loadError; }
CURL *cp_curl_easy_init(void) { return loaded() ? curl.easy_init() : NULL; }
void cp_curl_easy_cleanup(CURL *handle) { if (loaded()) curl.easy_cleanup(handle); }
struct curl_slist *cp_curl_slist_append(struct curl_slist *list, const char *string) {
    return loaded() ? curl.slist_append(list, string) : NULL;
}
void cp_curl_slist_free_all(struct curl_slist *list) { if (loaded()) curl.slist_free_all(list); }
void cp_curl_free(void *pointer) { if (loaded()) curl.free(pointer); }

CURLM *cp_curl_multi_init(void) { return loaded() ? curl.multi_init() : NULL; }
CURLMcode cp_curl_multi_cleanup(CURLM *multi) { return loaded() ? curl.multi_cleanup(multi) : CURLM_INTERNAL_ERROR; }
CURLMcode cp_curl_multi_add_handle(CURLM *multi, CURL *easy) {
    return loaded() ? curl.multi_add_handle(multi, easy) : CURLM_INTERNAL_ERROR;
}
CURLMcode cp_curl_multi_remove_handle(CURLM *multi, CURL *easy) {
    return loaded() ? curl.multi_remove_handle(multi, easy) : CURLM_INTERNAL_ERROR;
}
CURLMcode cp_curl_multi_perform(CURLM *multi, int *running) {
    return loaded() ? curl.multi_perform(multi, running) : CURLM_INTERNAL_ERROR;
}
CURLMcode cp_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned count, int timeoutMs, int *ready) {
    return loaded() ? curl.multi_poll(multi, extra, count, timeoutMs, ready) : CURLM_INTERNAL_ERROR;
}
CURLMcode cp_curl_multi_wakeup(CURLM *multi) { return loaded() ? curl.multi_wakeup(multi) : CURLM_INTERNAL_ERROR; }
CURLMsg *cp_curl_multi_info_read(CURLM *multi, int *remaining) {
    return loaded() ? curl.multi_info_read(multi, remaining) : NULL;
}

CURLSH *cp_curl_share_init(void) { return loaded() ? curl.share_init() : NULL; }
CURLSHcode cp_curl_share_cleanup(CURLSH *share) { return loaded() ? curl.share_cleanup(share) : CURLSHE_NOT_BUILT_IN; }

CURLU *cp_curl_url(void) { return loaded() ? curl.url() : NULL; }
void cp_curl_url_cleanup(CURLU *url) { if (loaded()) curl.url_cleanup(url); }
CURLUcode cp_curl_url_set(CURLU *url, CURLUPart part, const char *content, unsigned flags) {
    return loaded() ? curl.url_set(url, part, content, flags) : CURLUE_OUT_OF_MEMORY;
}
CURLUcode cp_curl_url_get(const CURLU *url, CURLUPart part, char **content, unsigned flags) {
    return loaded() ? curl.url_get(url, part, content, flags) : CURLUE_OUT_OF_MEMORY;
}
const char *cp_curl_url_strerror(CURLUcode code) { return loaded() ? curl.url_strerror(code) : loadError; }

#define EASY_SETOPT(name, type)                                                     \
    CURLcode cp_curl_setopt_##name(CURL *h, CURLoption o, type v) {                 \
        return loaded() ? curl.easy_setopt(h, o, v) : CURLE_FAILED_INIT;            \
    }
EASY_SETOPT(long, long)
EASY_SETOPT(string, const char *)
EASY_SETOPT(pointer, void *)
EASY_SETOPT(slist, struct curl_slist *)
EASY_SETOPT(offset, curl_off_t)
#undef EASY_SETOPT

#define EASY_SETOPT_FIXED(name, option, type)                                       \
    CURLcode cp_curl_setopt_##name(CURL *h, type v) {                               \
        return loaded() ? curl.easy_setopt(h, option, v) : CURLE_FAILED_INIT;       \
    }
EASY_SETOPT_FIXED(share, CURLOPT_SHARE, CURLSH *)
EASY_SETOPT_FIXED(write, CURLOPT_WRITEFUNCTION, cp_curl_data_callback)
EASY_SETOPT_FIXED(header, CURLOPT_HEADERFUNCTION, cp_curl_data_callback)
EASY_SETOPT_FIXED(sockopt, CURLOPT_SOCKOPTFUNCTION, curl_sockopt_callback)
EASY_SETOPT_FIXED(closesocket, CURLOPT_CLOSESOCKETFUNCTION, curl_closesocket_callback)
EASY_SETOPT_FIXED(xferinfo, CURLOPT_XFERINFOFUNCTION, curl_xferinfo_callback)
EASY_SETOPT_FIXED(debug, CURLOPT_DEBUGFUNCTION, curl_debug_callback)
EASY_SETOPT_FIXED(resolver_start, CURLOPT_RESOLVER_START_FUNCTION, curl_resolver_start_callback)
EASY_SETOPT_FIXED(prereq, CURLOPT_PREREQFUNCTION, curl_prereq_callback)
#undef EASY_SETOPT_FIXED

#define EASY_GETINFO(name, type)                                                    \
    CURLcode cp_curl_getinfo_##name(CURL *h, CURLINFO i, type *v) {                 \
        return loaded() ? curl.easy_getinfo(h, i, v) : CURLE_FAILED_INIT;           \
    }
EASY_GETINFO(long, long)
EASY_GETINFO(string, char *)
EASY_GETINFO(offset, curl_off_t)
EASY_GETINFO(slist, struct curl_slist *)
#undef EASY_GETINFO

CURLMcode cp_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) {
    return loaded() ? curl.multi_setopt(m, o, v) : CURLM_INTERNAL_ERROR;
}

CURLSHcode cp_curl_share_setopt_long(CURLSH *s, CURLSHoption o, long v) {
    return loaded() ? curl.share_setopt(s, o, v) : CURLSHE_NOT_BUILT_IN;
}
CURLSHcode cp_curl_share_setopt_pointer(CURLSH *s, CURLSHoption o, void *v) {
    return loaded() ? curl.share_setopt(s, o, v) : CURLSHE_NOT_BUILT_IN;
}
CURLSHcode cp_curl_share_setopt_lock(CURLSH *s, curl_lock_function f) {
    return loaded() ? curl.share_setopt(s, CURLSHOPT_LOCKFUNC, f) : CURLSHE_NOT_BUILT_IN;
}
CURLSHcode cp_curl_share_setopt_unlock(CURLSH *s, curl_unlock_function f) {
    return loaded() ? curl.share_setopt(s, CURLSHOPT_UNLOCKFUNC, f) : CURLSHE_NOT_BUILT_IN;
}
