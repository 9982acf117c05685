#pragma once
// OpenSSL's libcrypto (Debian libssl-dev): keys, signatures and digests for the simulator's
// signed webhooks and for JWS (client assertions, RS256 and ES256).
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/ec.h>
