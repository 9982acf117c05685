// libphonenumber's Parse and Format(E164), nothing else: the fuzzer's phone-number oracle.
#include "CFuzzPhoneNumber.h"

#include <cstring>
#include <string>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

bool fuzz_phone_number_e164(const char *text, const char *region, char *e164, size_t capacity, bool *is_valid) {
    const PhoneNumberUtil &util = *PhoneNumberUtil::GetInstance();
    PhoneNumber number;
    if (util.Parse(text, region, &number) != PhoneNumberUtil::NO_PARSING_ERROR) return false;
    std::string formatted;
    util.Format(number, PhoneNumberUtil::E164, &formatted);
    if (formatted.size() + 1 > capacity) return false;
    std::memcpy(e164, formatted.c_str(), formatted.size() + 1);
    *is_valid = util.IsValidNumber(number);
    return true;
}
