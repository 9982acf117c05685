#pragma once
#include <libqmi-glib.h>
