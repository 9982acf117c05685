#pragma once
#include <curl/curl.h>

// libcurl, loaded on first use (dlopen) instead of at start-up: its dependency closure (OpenSSL,
// GnuTLS, Kerberos, LDAP, SSH, … about 30 libraries) is most of an executable's start-up, and
// most commands (help, bearer up/down, modems) never make an HTTP request. Every function below
// is libcurl's of the same name without `cp_`, through the loaded library; curl's own names are
// not linked (calling one fails at link time). When libcurl cannot be loaded, the functions fail
// as libcurl does when out of resources (NULL, CURLE_FAILED_INIT, …) and `cp_curl_load_error`
// says why.

/// Loads libcurl if not yet done; NULL when it is loaded, else the loader's message.
const char *cp_curl_load_error(void);

CURLcode cp_curl_global_init(long flags);
const char *cp_curl_easy_strerror(CURLcode code);
CURL *cp_curl_easy_init(void);
void cp_curl_easy_cleanup(CURL *handle);
struct curl_slist *cp_curl_slist_append(struct curl_slist *list, const char *string);
void cp_curl_slist_free_all(struct curl_slist *list);
void cp_curl_free(void *pointer);

CURLM *cp_curl_multi_init(void);
CURLMcode cp_curl_multi_cleanup(CURLM *multi);
CURLMcode cp_curl_multi_add_handle(CURLM *multi, CURL *easy);
CURLMcode cp_curl_multi_remove_handle(CURLM *multi, CURL *easy);
CURLMcode cp_curl_multi_perform(CURLM *multi, int *running);
CURLMcode cp_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned count, int timeoutMs, int *ready);
CURLMcode cp_curl_multi_wakeup(CURLM *multi);
CURLMsg *cp_curl_multi_info_read(CURLM *multi, int *remaining);

CURLSH *cp_curl_share_init(void);
CURLSHcode cp_curl_share_cleanup(CURLSH *share);

CURLU *cp_curl_url(void);
void cp_curl_url_cleanup(CURLU *url);
CURLUcode cp_curl_url_set(CURLU *url, CURLUPart part, const char *content, unsigned flags);
CURLUcode cp_curl_url_get(const CURLU *url, CURLUPart part, char **content, unsigned flags);
const char *cp_curl_url_strerror(CURLUcode code);

// Typed forms of libcurl's variadic setopt/getinfo, so Swift passes exactly the C type each
// option expects.

CURLcode cp_curl_setopt_long(CURL *h, CURLoption o, long v);
CURLcode cp_curl_setopt_string(CURL *h, CURLoption o, const char *v);
CURLcode cp_curl_setopt_pointer(CURL *h, CURLoption o, void *v);
CURLcode cp_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v);
CURLcode cp_curl_setopt_offset(CURL *h, CURLoption o, curl_off_t v);
CURLcode cp_curl_setopt_share(CURL *h, CURLSH *s);

/// Data callbacks (CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION).
typedef size_t (*cp_curl_data_callback)(char *data, size_t size, size_t nmemb, void *userdata);
CURLcode cp_curl_setopt_write(CURL *h, cp_curl_data_callback f);
CURLcode cp_curl_setopt_header(CURL *h, cp_curl_data_callback f);
CURLcode cp_curl_setopt_sockopt(CURL *h, curl_sockopt_callback f);
CURLcode cp_curl_setopt_closesocket(CURL *h, curl_closesocket_callback f);
CURLcode cp_curl_setopt_xferinfo(CURL *h, curl_xferinfo_callback f);
CURLcode cp_curl_setopt_debug(CURL *h, curl_debug_callback f);
CURLcode cp_curl_setopt_resolver_start(CURL *h, curl_resolver_start_callback f);
CURLcode cp_curl_setopt_prereq(CURL *h, curl_prereq_callback f);

CURLcode cp_curl_getinfo_long(CURL *h, CURLINFO i, long *v);
CURLcode cp_curl_getinfo_string(CURL *h, CURLINFO i, char **v);
CURLcode cp_curl_getinfo_offset(CURL *h, CURLINFO i, curl_off_t *v);
CURLcode cp_curl_getinfo_slist(CURL *h, CURLINFO i, struct curl_slist **v);

CURLMcode cp_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v);

CURLSHcode cp_curl_share_setopt_long(CURLSH *s, CURLSHoption o, long v);
CURLSHcode cp_curl_share_setopt_pointer(CURLSH *s, CURLSHoption o, void *v);
CURLSHcode cp_curl_share_setopt_lock(CURLSH *s, curl_lock_function f);
CURLSHcode cp_curl_share_setopt_unlock(CURLSH *s, curl_unlock_function f);
