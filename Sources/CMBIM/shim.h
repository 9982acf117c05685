#pragma once
#include <libmbim-glib.h>
