/* CPhoneNumber: a small, plain C API over libphonenumber (Debian's libphonenumber-dev).
 *
 * Every function may be called from any thread: libphonenumber's PhoneNumberUtil is a
 * process-wide singleton whose parsing and formatting methods are const and thread-safe.
 * The first call loads the numbering-plan metadata (a few milliseconds); later calls are fast.
 */
#ifndef CPHONENUMBER_H
#define CPHONENUMBER_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Outcome of cpn_parse (libphonenumber's PhoneNumberUtil::ErrorType, plus two of ours). */
typedef enum cpn_parse_status {
    CPN_PARSE_OK = 0,
    CPN_PARSE_INVALID_COUNTRY_CODE,  /* no '+' and no usable region, or an unknown calling code */
    CPN_PARSE_NOT_A_NUMBER,          /* no phone number could be found in the text */
    CPN_PARSE_TOO_SHORT_AFTER_IDD,   /* too short after the international prefix */
    CPN_PARSE_TOO_SHORT_NSN,         /* national significant number too short */
    CPN_PARSE_TOO_LONG_NSN,          /* national significant number too long */
    CPN_PARSE_BAD_ARGUMENT,          /* NULL pointer or text longer than CPN_MAX_INPUT */
    CPN_PARSE_INTERNAL,              /* an exception inside the library, or a result too large */
} cpn_parse_status;

/* Number type (same order as PhoneNumberUtil::PhoneNumberType). */
typedef enum cpn_number_type {
    CPN_TYPE_FIXED_LINE = 0,
    CPN_TYPE_MOBILE,
    CPN_TYPE_FIXED_LINE_OR_MOBILE,
    CPN_TYPE_TOLL_FREE,
    CPN_TYPE_PREMIUM_RATE,
    CPN_TYPE_SHARED_COST,
    CPN_TYPE_VOIP,
    CPN_TYPE_PERSONAL_NUMBER,
    CPN_TYPE_PAGER,
    CPN_TYPE_UAN,
    CPN_TYPE_VOICEMAIL,
    CPN_TYPE_UNKNOWN,
} cpn_number_type;

/* Whether the length is plausible (same order as PhoneNumberUtil::ValidationResult). */
typedef enum cpn_possibility {
    CPN_POSSIBLE = 0,
    CPN_POSSIBLE_LOCAL_ONLY,
    CPN_POSSIBLE_INVALID_COUNTRY_CODE,
    CPN_POSSIBLE_TOO_SHORT,
    CPN_POSSIBLE_INVALID_LENGTH,
    CPN_POSSIBLE_TOO_LONG,
} cpn_possibility;

/* Longest text cpn_parse accepts, in bytes. */
#define CPN_MAX_INPUT 256

/* A parsed number. Strings are NUL-terminated UTF-8. */
typedef struct cpn_number {
    int32_t country_code;                 /* 44 */
    char national_significant_number[32]; /* "7940448591" (Italian leading zeros kept) */
    char e164[32];                        /* "+447940448591" */
    char international[96];               /* "+44 7940 448591" */
    char region[8];                       /* "GB"; "001" non-geographic; "ZZ" when invalid */
    char country_region[8];               /* main region of the calling code ("GB"), or "ZZ" */
    cpn_number_type type;                 /* CPN_TYPE_UNKNOWN when invalid */
    cpn_possibility possibility;          /* length check, meaningful when !is_valid */
    bool is_valid;                        /* matches a number pattern of its region */
    bool country_code_written;            /* the calling code was in the text (after '+' or an
                                             international prefix), not taken from the region */
} cpn_number;

/* Parses `text` (UTF-8) with `default_region` ("GB"; "ZZ" or NULL when the text must carry
 * its '+' and calling code). On CPN_PARSE_OK, `*out` is filled in; otherwise it is zeroed. */
cpn_parse_status cpn_parse(const char *text, const char *default_region, cpn_number *out);

/* True when `region` is a two-letter region code libphonenumber has metadata for. */
bool cpn_is_supported_region(const char *region);

/* The country calling code of a supported region (44 for "GB"), or 0. */
int32_t cpn_country_code_for_region(const char *region);

#ifdef __cplusplus
}
#endif

#endif /* CPHONENUMBER_H */
