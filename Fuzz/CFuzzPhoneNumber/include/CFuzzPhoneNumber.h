/* CFuzzPhoneNumber: libphonenumber called directly, as the fuzzer's reference for the project's
 * phone-number front end (Sources/PhoneNumbers). Independent of Sources/CPhoneNumber on purpose. */
#ifndef CFUZZPHONENUMBER_H
#define CFUZZPHONENUMBER_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parses `text` with PhoneNumberUtil::Parse in `region` ("ZZ" for none). Returns false when it
 * does not parse; otherwise writes the E.164 form (NUL-terminated, at most `capacity` bytes)
 * and whether IsValidNumber holds. */
bool fuzz_phone_number_e164(const char *text, const char *region, char *e164, size_t capacity, bool *is_valid);

#ifdef __cplusplus
}
#endif
#endif
