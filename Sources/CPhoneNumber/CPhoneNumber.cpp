// The C API of CPhoneNumber.h over libphonenumber's PhoneNumberUtil.
#include "CPhoneNumber.h"

#include <cstring>
#include <new>
#include <set>
#include <string>

#include <phonenumbers/phonenumber.pb.h>
#include <phonenumbers/phonenumberutil.h>

using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

// The C enums mirror libphonenumber's; a new library version that reorders them fails here.
static_assert(CPN_PARSE_OK == int(PhoneNumberUtil::NO_PARSING_ERROR), "ErrorType order");
static_assert(CPN_PARSE_INVALID_COUNTRY_CODE == int(PhoneNumberUtil::INVALID_COUNTRY_CODE_ERROR), "ErrorType order");
static_assert(CPN_PARSE_NOT_A_NUMBER == int(PhoneNumberUtil::NOT_A_NUMBER), "ErrorType order");
static_assert(CPN_PARSE_TOO_SHORT_AFTER_IDD == int(PhoneNumberUtil::TOO_SHORT_AFTER_IDD), "ErrorType order");
static_assert(CPN_PARSE_TOO_SHORT_NSN == int(PhoneNumberUtil::TOO_SHORT_NSN), "ErrorType order");
static_assert(CPN_PARSE_TOO_LONG_NSN == int(PhoneNumberUtil::TOO_LONG_NSN), "ErrorType order");
static_assert(CPN_PARSE_TOO_LONG_NSN == int(PhoneNumberUtil::kMaxErrorType), "ErrorType count");
static_assert(CPN_TYPE_FIXED_LINE == int(PhoneNumberUtil::FIXED_LINE), "PhoneNumberType order");
static_assert(CPN_TYPE_MOBILE == int(PhoneNumberUtil::MOBILE), "PhoneNumberType order");
static_assert(CPN_TYPE_FIXED_LINE_OR_MOBILE == int(PhoneNumberUtil::FIXED_LINE_OR_MOBILE), "PhoneNumberType order");
static_assert(CPN_TYPE_TOLL_FREE == int(PhoneNumberUtil::TOLL_FREE), "PhoneNumberType order");
static_assert(CPN_TYPE_PREMIUM_RATE == int(PhoneNumberUtil::PREMIUM_RATE), "PhoneNumberType order");
static_assert(CPN_TYPE_SHARED_COST == int(PhoneNumberUtil::SHARED_COST), "PhoneNumberType order");
static_assert(CPN_TYPE_VOIP == int(PhoneNumberUtil::VOIP), "PhoneNumberType order");
static_assert(CPN_TYPE_PERSONAL_NUMBER == int(PhoneNumberUtil::PERSONAL_NUMBER), "PhoneNumberType order");
static_assert(CPN_TYPE_PAGER == int(PhoneNumberUtil::PAGER), "PhoneNumberType order");
static_assert(CPN_TYPE_UAN == int(PhoneNumberUtil::UAN), "PhoneNumberType order");
static_assert(CPN_TYPE_VOICEMAIL == int(PhoneNumberUtil::VOICEMAIL), "PhoneNumberType order");
static_assert(CPN_TYPE_UNKNOWN == int(PhoneNumberUtil::UNKNOWN), "PhoneNumberType order");
static_assert(CPN_POSSIBLE == int(PhoneNumberUtil::IS_POSSIBLE), "ValidationResult order");
static_assert(CPN_POSSIBLE_LOCAL_ONLY == int(PhoneNumberUtil::IS_POSSIBLE_LOCAL_ONLY), "ValidationResult order");
static_assert(CPN_POSSIBLE_INVALID_COUNTRY_CODE == int(PhoneNumberUtil::INVALID_COUNTRY_CODE), "ValidationResult order");
static_assert(CPN_POSSIBLE_TOO_SHORT == int(PhoneNumberUtil::TOO_SHORT), "ValidationResult order");
static_assert(CPN_POSSIBLE_INVALID_LENGTH == int(PhoneNumberUtil::INVALID_LENGTH), "ValidationResult order");
static_assert(CPN_POSSIBLE_TOO_LONG == int(PhoneNumberUtil::TOO_LONG), "ValidationResult order");
static_assert(CPN_POSSIBLE_TOO_LONG == int(PhoneNumberUtil::kMaxValidationResult), "ValidationResult count");

namespace {

/// Copies `value` with its NUL into `buffer`; false when it does not fit.
template <size_t N>
bool copy(const std::string &value, char (&buffer)[N]) {
    if (value.size() >= N) return false;
    std::memcpy(buffer, value.c_str(), value.size() + 1);
    return true;
}

/// The region argument libphonenumber expects: "ZZ" stands for "none".
std::string regionArgument(const char *region) {
    return (region == nullptr || region[0] == '\0') ? std::string("ZZ") : std::string(region);
}

}  // namespace

extern "C" cpn_parse_status cpn_parse(const char *text, const char *default_region, cpn_number *out) {
    if (out == nullptr) return CPN_PARSE_BAD_ARGUMENT;
    std::memset(out, 0, sizeof *out);
    if (text == nullptr || std::strlen(text) > CPN_MAX_INPUT) return CPN_PARSE_BAD_ARGUMENT;
    try {
        const PhoneNumberUtil &util = *PhoneNumberUtil::GetInstance();
        PhoneNumber number;
        const PhoneNumberUtil::ErrorType error =
            util.ParseAndKeepRawInput(text, regionArgument(default_region), &number);
        if (error != PhoneNumberUtil::NO_PARSING_ERROR) return static_cast<cpn_parse_status>(error);

        std::string nsn, e164, international, region, countryRegion;
        util.GetNationalSignificantNumber(number, &nsn);
        util.Format(number, PhoneNumberUtil::E164, &e164);
        util.Format(number, PhoneNumberUtil::INTERNATIONAL, &international);
        util.GetRegionCodeForNumber(number, &region);
        util.GetRegionCodeForCountryCode(number.country_code(), &countryRegion);

        cpn_number result = {};
        result.country_code = number.country_code();
        result.is_valid = util.IsValidNumber(number);
        result.type = static_cast<cpn_number_type>(util.GetNumberType(number));
        result.possibility = static_cast<cpn_possibility>(util.IsPossibleNumberWithReason(number));
        result.country_code_written = number.country_code_source() != PhoneNumber::FROM_DEFAULT_COUNTRY;
        if (!copy(nsn, result.national_significant_number) || !copy(e164, result.e164) ||
            !copy(international, result.international) ||
            !copy(region, result.region) || !copy(countryRegion, result.country_region)) {
            return CPN_PARSE_INTERNAL;
        }
        *out = result;
        return CPN_PARSE_OK;
    } catch (...) {
        return CPN_PARSE_INTERNAL;
    }
}

extern "C" bool cpn_is_supported_region(const char *region) {
    if (region == nullptr || std::strlen(region) != 2) return false;
    try {
        static const std::set<std::string> regions = [] {
            std::set<std::string> all;
            PhoneNumberUtil::GetInstance()->GetSupportedRegions(&all);
            return all;
        }();
        return regions.count(region) == 1;
    } catch (...) {
        return false;
    }
}

extern "C" int32_t cpn_country_code_for_region(const char *region) {
    if (!cpn_is_supported_region(region)) return 0;
    try {
        return PhoneNumberUtil::GetInstance()->GetCountryCodeForRegion(region);
    } catch (...) {
        return 0;
    }
}
