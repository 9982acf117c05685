#pragma once
#include <ares.h>
