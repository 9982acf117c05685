#pragma once
#include <curl/curl.h>

// Typed wrappers for libcurl's variadic setopt/getinfo, so Swift passes exactly the C type
// each option expects.

static inline CURLcode cp_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode cp_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode cp_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode cp_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode cp_curl_setopt_offset(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode cp_curl_setopt_share(CURL *h, CURLSH *s) { return curl_easy_setopt(h, CURLOPT_SHARE, s); }

/// Data callbacks (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
typedef size_t (*cp_curl_data_callback)(char *data, size_t size, size_t nmemb, void *userdata);
static inline CURLcode cp_curl_setopt_write(CURL *h, cp_curl_data_callback f) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode cp_curl_setopt_header(CURL *h, cp_curl_data_callback f) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
static inline CURLcode cp_curl_setopt_sockopt(CURL *h, curl_sockopt_callback f) { return curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, f); }
static inline CURLcode cp_curl_setopt_closesocket(CURL *h, curl_closesocket_callback f) { return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, f); }
static inline CURLcode cp_curl_setopt_xferinfo(CURL *h, curl_xferinfo_callback f) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f); }
static inline CURLcode cp_curl_setopt_debug(CURL *h, curl_debug_callback f) { return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, f); }
static inline CURLcode cp_curl_setopt_resolver_start(CURL *h, curl_resolver_start_callback f) { return curl_easy_setopt(h, CURLOPT_RESOLVER_START_FUNCTION, f); }

static inline CURLcode cp_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode cp_curl_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode cp_curl_getinfo_offset(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode cp_curl_getinfo_slist(CURL *h, CURLINFO i, struct curl_slist **v) { return curl_easy_getinfo(h, i, v); }

static inline CURLMcode cp_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

static inline CURLSHcode cp_curl_share_setopt_long(CURLSH *s, CURLSHoption o, long v) { return curl_share_setopt(s, o, v); }
static inline CURLSHcode cp_curl_share_setopt_pointer(CURLSH *s, CURLSHoption o, void *v) { return curl_share_setopt(s, o, v); }
static inline CURLSHcode cp_curl_share_setopt_lock(CURLSH *s, curl_lock_function f) { return curl_share_setopt(s, CURLSHOPT_LOCKFUNC, f); }
static inline CURLSHcode cp_curl_share_setopt_unlock(CURLSH *s, curl_unlock_function f) { return curl_share_setopt(s, CURLSHOPT_UNLOCKFUNC, f); }
